# Test sources of store/ (the request history and captures; appended to the one swapd_tests binary).
list(APPEND SWAPD_TEST_SOURCES
  store/activity_test.cpp
  store/capture_test.cpp
  store/sqlite_db_test.cpp
)
