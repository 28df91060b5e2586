{
  # Alternative build of the same addon with node-gyp (the default build is
  # cmake-js, see CMakeLists.txt). Output: build/Release/gsf_native.node.
  # The sources are native/addon-sources.txt, the list CMakeLists.txt reads too.
  "targets": [
    {
      "target_name": "gsf_native",
      "sources": ["<!@(node native/list-sources.mjs)"],
      "include_dirs": [
        "<!(node -p \"require('path').dirname(require.resolve('node-addon-api/package.json'))\")"
      ],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
      "conditions": [["OS=='linux'", { "libraries": ["-ldl"] }]],
      "cflags!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17", "-std=gnu++14"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-O2", "-fvisibility=hidden", "-Wall", "-Wextra"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "MACOSX_DEPLOYMENT_TARGET": "10.15",
        "OTHER_CPLUSPLUSFLAGS": ["-fvisibility=hidden"]
      },
      "msvs_settings": {
        "VCCLCompilerTool": { "ExceptionHandling": 1, "AdditionalOptions": ["/std:c++17"] }
      }
    }
  ]
}
