# Regression tests for what the fuzz targets (fuzz/, scripts/fuzz.sh) found: each feeds the
# offending input to the function that failed on it.
list(APPEND SWAPD_TEST_SOURCES
  fuzz_regressions/request_regressions_test.cpp
  fuzz_regressions/usage_regressions_test.cpp
  fuzz_regressions/config_regressions_test.cpp
)
