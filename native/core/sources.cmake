# The core sources, shared by the addon build and the core test build.
set(GSF_CORE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/config_blob.cc
  ${CMAKE_CURRENT_LIST_DIR}/counter_store.cc
  ${CMAKE_CURRENT_LIST_DIR}/name_table.cc
  ${CMAKE_CURRENT_LIST_DIR}/object_cache.cc
  ${CMAKE_CURRENT_LIST_DIR}/profiler.cc
  ${CMAKE_CURRENT_LIST_DIR}/runtime.cc
  ${CMAKE_CURRENT_LIST_DIR}/tag_queue.cc
  ${CMAKE_CURRENT_LIST_DIR}/tag_queue_parked.cc
  ${CMAKE_CURRENT_LIST_DIR}/tag_queue_slots.cc
  ${CMAKE_CURRENT_LIST_DIR}/tag_queue_stats.cc
  ${CMAKE_CURRENT_LIST_DIR}/timer_store.cc
  ${CMAKE_CURRENT_LIST_DIR}/wake_signal.cc
)
