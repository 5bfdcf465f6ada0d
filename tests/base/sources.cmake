list(APPEND SWAPD_TEST_SOURCES base/pacer_test.cpp base/stable_hash_test.cpp
  base/wake_fd_test.cpp)
