// Configs that broke the loader (config/loader.h), found by fuzz_config.
#include <catch2/catch.hpp>

#include "config/loader.h"

namespace swapd {
namespace {

// Hidden ([.]) until config/yaml_document.cpp refuses an alias inside its own anchor: today the
// first input leaks the node cycle it builds and the second overflows the stack (the metadata is
// converted to JSON recursively), which would take the whole test binary down. Once fixed, tag
// these [unit][fuzz].
TEST_CASE("an alias inside its own anchor is an error, not a cycle", "[.][fuzz-pending]") {
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
