# find_package(gsf CONFIG): gsf's CMake package for native plugins kept outside the gsf tree.
# It provides gsf_add_plugin() (GsfPlugin.cmake) and GSF_PLUGIN_INCLUDE_DIR. CMake finds it
#   - in a checkout: cmake -Dgsf_DIR=<gsf checkout>/cmake ...
#   - installed with npm: through Node's module resolution (the README's snippet sets gsf_DIR
#     from require.resolve('gsf/cmake/gsf-config.cmake') when it is not given).
include("${CMAKE_CURRENT_LIST_DIR}/GsfPlugin.cmake")
