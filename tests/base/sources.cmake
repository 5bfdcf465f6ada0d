list(APPEND SWAPD_TEST_SOURCES base/pacer_test.cpp)
