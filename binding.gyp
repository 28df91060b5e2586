{
  # Alternative build of the same addon with node-gyp (the default build is
  # cmake-js, see CMakeLists.txt). Output: build/Release/gsf_native.node.
  "targets": [
    {
      "target_name": "gsf_native",
      "sources": [
        "native/core/config_blob.cc",
        "native/core/counter_store.cc",
        "native/core/name_table.cc",
        "native/core/object_cache.cc",
        "native/core/profiler.cc",
        "native/core/runtime.cc",
        "native/core/tag_queue.cc",
        "native/core/tag_queue_parked.cc",
        "native/core/tag_queue_slots.cc",
        "native/core/tag_queue_stats.cc",
        "native/core/timer_store.cc",
        "native/core/wake_signal.cc",
        "native/binding/addon.cc",
        "native/binding/boundary.cc",
        "native/binding/config_blob_binding.cc",
        "native/binding/counter_store_binding.cc",
        "native/binding/name_table_binding.cc",
        "native/binding/object_cache_binding.cc",
        "native/binding/profiler_binding.cc",
        "native/binding/tag_queue_binding.cc",
        "native/binding/timer_store_binding.cc",
        "native/binding/wake_signal_binding.cc",
        "native/binding/worker_slots_binding.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('path').dirname(require.resolve('node-addon-api/package.json'))\")"
      ],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
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
