# Test sources of daemon/ (appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES)
