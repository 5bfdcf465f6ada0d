// `performance:` (GET /api/performance's sampling): llama-swap's defaults, Go durations and
// numbers of seconds for `every`, its 5 s minimum reported at its place, unknown keys warned.
#include <catch2/catch.hpp>

#include "tests/config/config_test_util.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;

const std::string kPerfModels = "models:\n  a:\n    cmd: srv --port ${PORT}\n";

TEST_CASE("performance: on by default, every 5s", "[unit][config][performance]") {
  LoadResult r = Parse(kPerfModels);
  REQUIRE(r.ok());
  CHECK_FALSE(r.config->performance.disabled);
  CHECK(r.config->performance.every == 5000ms);
  LoadResult empty = Parse("performance:\n" + kPerfModels);
  REQUIRE(empty.ok());
  CHECK(empty.config->performance == PerformanceSettings{});
  CHECK(CountSeverity(empty, Diagnostic::Severity::kWarning) == 0);
}

TEST_CASE("performance.every: Go durations and seconds; disabled", "[unit][config][performance]") {
  const std::vector<std::pair<std::string, std::chrono::milliseconds>> cases = {
      {"5s", 5000ms}, {"1m", 60000ms}, {"1m30s", 90000ms},
      {"7", 7000ms},  {"5.5", 5500ms}, {"\"10s\"", 10000ms}};
  for (const auto& [text, every] : cases) {
    LoadResult r = Parse("performance: {every: " + text + "}\n" + kPerfModels);
    INFO(text << ": " << r.ErrorText());
    REQUIRE(r.ok());
    CHECK(r.config->performance.every == every);
  }
  LoadResult off = Parse("performance:\n  disabled: true\n" + kPerfModels);
  REQUIRE(off.ok());
  CHECK(off.config->performance.disabled);
  CHECK(off.config->performance.every == 5000ms);
}

TEST_CASE("performance.every below 5s, or not a duration, is an error at its place",
          "[unit][config][performance]") {
  for (const std::string every : {"1s", "4", "500ms", "0"}) {
    LoadResult r = Parse("performance:\n  every: " + every + "\n" + kPerfModels);
    INFO(every << ": " << r.ErrorText());
    CHECK_FALSE(r.ok());
    const Diagnostic* d = FindDiag(r, "performance.every: must be at least 5s");
    REQUIRE(d);
    CHECK(At(d) == "2:10");
  }
  LoadResult bad = Parse("performance: {every: soon, disabled: maybe}\n" + kPerfModels);
  CHECK_FALSE(bad.ok());
  CHECK(FindDiag(bad, "performance.every: expected a duration such as \"5s\""));
  CHECK(FindDiag(bad, "performance.disabled: expected"));
  LoadResult typo = Parse("performance: {evry: 5s}\n" + kPerfModels);
  REQUIRE(typo.ok());
  CHECK(FindDiag(typo, "unknown key performance.evry (did you mean every?)"));
}

}  // namespace
}  // namespace swapd::testing
