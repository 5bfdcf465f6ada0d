# Test sources of daemon/ (appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES daemon/cli_test.cpp daemon/check_command_test.cpp daemon/examples_test.cpp)
# fake-llama-server tests and the shared integration-test helpers (tests/support/).
list(APPEND SWAPD_TEST_SOURCES daemon/fake_backend_test.cpp support/child_process.cpp
  support/http_wait.cpp support/fake_backend_process.cpp support/raw_connection.cpp
  support/swapd_process.cpp support/event_stream.cpp)
list(APPEND SWAPD_TEST_SOURCES daemon/service_notify_test.cpp daemon/sd_notify_test.cpp)
list(APPEND SWAPD_TEST_SOURCES daemon/docker_config_test.cpp daemon/check_peers_test.cpp)
list(APPEND SWAPD_TEST_SOURCES daemon/reload_test.cpp)
list(APPEND SWAPD_TEST_SOURCES daemon/logs_metrics_test.cpp)
list(APPEND SWAPD_TEST_SOURCES daemon/slot_cache_test.cpp)
list(APPEND SWAPD_TEST_SOURCES daemon/fault_test.cpp daemon/memory_budget_test.cpp)
list(APPEND SWAPD_TEST_SOURCES daemon/memory_meter_test.cpp daemon/check_memory_test.cpp
  daemon/history_store_test.cpp)
list(APPEND SWAPD_TEST_SOURCES daemon/events_test.cpp daemon/inflight_test.cpp)
list(APPEND SWAPD_TEST_SOURCES daemon/activity_test.cpp daemon/capture_test.cpp)
list(APPEND SWAPD_TEST_SOURCES daemon/residency_test.cpp daemon/page_prefetch_test.cpp
  daemon/amd_gpu_meter_test.cpp)
list(APPEND SWAPD_TEST_SOURCES daemon/dashboard_test.cpp)
list(APPEND SWAPD_TEST_SOURCES daemon/load_progress_test.cpp)
list(APPEND SWAPD_TEST_SOURCES daemon/bench_store_test.cpp daemon/bench_routes_test.cpp
  daemon/bench_command_test.cpp)
