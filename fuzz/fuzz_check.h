// FUZZ_CHECK: the invariant check of the fuzz targets. Unlike assert() it stays on in release
// builds (the fuzz build is RelWithDebInfo, so NDEBUG is set); a failure prints the condition and
// aborts, which libFuzzer records as a crash with its input. Thread safe (targets are
// single-threaded anyway).
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, what)                                                                     \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "%s:%d: invariant broken: %s (%s)\n", __FILE__, __LINE__, #cond, what); \
      std::abort();                                                                                \
    }                                                                                              \
  } while (0)
