# gsf_add_plugin(NAME SOURCES src... [OUTPUT_DIRECTORY dir])
#
# Builds a gsf native plugin: a loadable module named NAME.so (NAME.dll on Windows) compiled
# against gsf's plugin headers (native/include: gsf_plugin.h, gsf_msgpack.h, gsf_plugin.hpp).
# It lands in OUTPUT_DIRECTORY, by default `build/` next to the CMakeLists.txt that calls this,
# which is where the plugin folder's gsf-plugin.json points gsf to.
#
# A plugin kept outside the gsf repository finds it as a CMake package (cmake/gsf-config.cmake):
#   find_package(gsf CONFIG REQUIRED)   # -Dgsf_DIR=<gsf checkout>/cmake, or gsf_DIR from node_modules
#   gsf_add_plugin(my-plugin SOURCES my_plugin.c)
# (the README's "A native plugin in 30 lines" has the whole CMakeLists.txt).
include_guard(GLOBAL)

get_filename_component(GSF_PLUGIN_INCLUDE_DIR "${CMAKE_CURRENT_LIST_DIR}/../native/include" ABSOLUTE)
if(NOT EXISTS "${GSF_PLUGIN_INCLUDE_DIR}/gsf_plugin.h")
  message(FATAL_ERROR "gsf: ${CMAKE_CURRENT_LIST_FILE} is not in a gsf tree (no ${GSF_PLUGIN_INCLUDE_DIR}/gsf_plugin.h): "
                      "point gsf_DIR at the cmake/ folder of a gsf checkout or of node_modules/gsf")
endif()
set(GSF_PLUGIN_INCLUDE_DIR "${GSF_PLUGIN_INCLUDE_DIR}" CACHE INTERNAL "gsf plugin headers")

function(gsf_add_plugin name)
  cmake_parse_arguments(PARSE_ARGV 1 GSF "" "OUTPUT_DIRECTORY" "SOURCES")
  if(NOT GSF_SOURCES)
    message(FATAL_ERROR "gsf_add_plugin(${name}): give its SOURCES")
  endif()
  if(NOT GSF_OUTPUT_DIRECTORY)
    set(GSF_OUTPUT_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}/build")
  endif()
  add_library(${name} MODULE ${GSF_SOURCES})
  target_include_directories(${name} PRIVATE "${GSF_PLUGIN_INCLUDE_DIR}")
  # Plugins export exactly one symbol, the descriptor (GSF_PLUGIN_EXPORT marks it).
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON
    LIBRARY_OUTPUT_DIRECTORY "${GSF_OUTPUT_DIRECTORY}")
  if(NOT WIN32)
    set_target_properties(${name} PROPERTIES SUFFIX ".so")
  endif()
  # Multi-configuration generators append the configuration to the directory unless told not to.
  foreach(config IN LISTS CMAKE_CONFIGURATION_TYPES)
    string(TOUPPER "${config}" config)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY_${config} "${GSF_OUTPUT_DIRECTORY}")
  endforeach()
  if(MSVC)
    target_compile_options(${name} PRIVATE /W4)
  else()
    target_compile_options(${name} PRIVATE -Wall -Wextra)
  endif()
endfunction()
