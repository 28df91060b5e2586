# The addon's sources, read from native/addon-sources.txt (binding.gyp reads the same list):
#   GSF_CORE_SOURCES     native/core, shared by the addon build and the core test build
#   GSF_BINDING_SOURCES  native/binding
# and the testing build's own sources, read from native/binding/testing-sources.txt:
#   GSF_TESTING_SOURCES  exports of the testing addon only (gsf_native_testing.node)
# Absolute paths.
get_filename_component(GSF_REPO_ROOT "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${GSF_REPO_ROOT}/native/addon-sources.txt")
file(STRINGS "${GSF_REPO_ROOT}/native/addon-sources.txt" gsf_source_lines)
set(GSF_CORE_SOURCES)
set(GSF_BINDING_SOURCES)
foreach(line IN LISTS gsf_source_lines)
  string(STRIP "${line}" line)
  if(line STREQUAL "" OR line MATCHES "^#")
    continue()
  endif()
  if(line MATCHES "^native/core/")
    list(APPEND GSF_CORE_SOURCES "${GSF_REPO_ROOT}/${line}")
  elseif(line MATCHES "^native/binding/")
    list(APPEND GSF_BINDING_SOURCES "${GSF_REPO_ROOT}/${line}")
  else()
    message(FATAL_ERROR "native/addon-sources.txt: ${line} is neither in native/core nor in native/binding")
  endif()
endforeach()

set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${GSF_REPO_ROOT}/native/binding/testing-sources.txt")
file(STRINGS "${GSF_REPO_ROOT}/native/binding/testing-sources.txt" gsf_testing_lines)
set(GSF_TESTING_SOURCES)
foreach(line IN LISTS gsf_testing_lines)
  string(STRIP "${line}" line)
  if(NOT line STREQUAL "" AND NOT line MATCHES "^#")
    list(APPEND GSF_TESTING_SOURCES "${GSF_REPO_ROOT}/${line}")
  endif()
endforeach()
