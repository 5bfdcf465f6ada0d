# Test sources of api/ (the control plane's routes; appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES
  api/bench_routes_test.cpp
  api/dashboard_test.cpp
  api/event_routes_test.cpp
  api/llama_swap_ui_test.cpp
  api/performance_test.cpp
)
