# Test sources of observe/ (metrics, events, logs; appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES
  observe/events_test.cpp
  observe/fan_out_test.cpp
  observe/load_progress_test.cpp
  observe/logs_metrics_test.cpp
  observe/model_server_gauges_test.cpp
)
