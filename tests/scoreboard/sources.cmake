# Test sources of scoreboard/ (swapd bench and its store; appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES
  scoreboard/bench_command_test.cpp
  scoreboard/bench_options_test.cpp
  scoreboard/bench_store_test.cpp
  scoreboard/bench_swap_test.cpp
  scoreboard/chat_stream_test.cpp
  scoreboard/gates_test.cpp
  scoreboard/machine_info_test.cpp
  scoreboard/quiet_guard_test.cpp
  scoreboard/report_test.cpp
)
