# Test sources of scoreboard/ (`swapd bench`), appended to the one swapd_tests binary.
list(APPEND SWAPD_TEST_SOURCES scoreboard/bench_options_test.cpp scoreboard/chat_stream_test.cpp
  scoreboard/report_test.cpp)
