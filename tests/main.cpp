// The Catch2 main of swapd_tests (compiled once; it is the slowest file to build).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
