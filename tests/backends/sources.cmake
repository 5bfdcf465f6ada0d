# Test sources of backends/ (appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES
  backends/scheduler_queue_test.cpp
  backends/scheduler_test.cpp
)
