# Test sources of check/ (swapd check; appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES
  check/check_command_test.cpp
  check/check_memory_test.cpp
  check/check_peers_test.cpp
)
