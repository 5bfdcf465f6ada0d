// Configs that broke the loader (config/loader.h), found by fuzz_config.
#include <catch2/catch.hpp>

#include "config/loader.h"

namespace swapd {
namespace {

// An alias inside its own anchor once built a node cycle (leaked, and recursed without end).
TEST_CASE("an alias inside its own anchor is an error, not a cycle", "[unit][fuzz]") {
  for (const char* yaml : {
           "a: &x [*x]\n",
           "models:\n  m: &m\n    cmd: srv\n    <<: *m\n",
           "models:\n  m:\n    cmd: srv\n    metadata: &x {a: *x}\n",
           "models:\n  m:\n    cmd: srv\n    filters:\n      setParams: &x {a: [*x]}\n",
       }) {
    INFO(yaml);
    LoadResult r = ParseConfig(yaml);
    CHECK_FALSE(r.ok());
    CHECK_THAT(r.ErrorText(), Catch::Contains("contains"));
  }
}

}  // namespace
}  // namespace swapd
