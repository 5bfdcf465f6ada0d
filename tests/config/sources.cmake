# Test sources of config/ (appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES)
