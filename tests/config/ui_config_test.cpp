// `ui.activity.session_id` (the /api/events uiConfig): llama-swap's default, a list normalized as
// llama-swap does, a wrong type reported where it is, other keys under `ui` tolerated.
#include <catch2/catch.hpp>

#include "tests/config/config_test_util.h"

namespace swapd::testing {
namespace {

const std::string kModels = "models:\n  a:\n    cmd: srv --port ${PORT}\n";

TEST_CASE("ui.activity.session_id defaults to llama-swap's two headers", "[unit][config]") {
  LoadResult r = Parse(kModels);
  REQUIRE(r.ok());
  CHECK(r.config->ui.session_id_headers ==
        std::vector<std::string>{"X-Session-ID", "X-Litellm-Session-Id"});
  // `ui:` with nothing under it changes nothing, and is no warning.
  LoadResult empty = Parse("ui:\n" + kModels);
  REQUIRE(empty.ok());
  CHECK(empty.config->ui.session_id_headers.size() == 2);
  CHECK(CountSeverity(empty, Diagnostic::Severity::kWarning) == 0);
}

TEST_CASE("ui.activity.session_id: names trimmed, blanks and repeats dropped", "[unit][config]") {
  LoadResult r =
      Parse("ui:\n  activity:\n    session_id: [' X-Conversation ', '', x-conversation, X-Chat]\n" +
            kModels);
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  CHECK(r.config->ui.session_id_headers == std::vector<std::string>{"X-Conversation", "X-Chat"});
  // An empty list (or null) is no header at all, as in llama-swap.
  LoadResult none = Parse("ui:\n  activity:\n    session_id: []\n" + kModels);
  REQUIRE(none.ok());
  CHECK(none.config->ui.session_id_headers.empty());
}

TEST_CASE("ui.activity.session_id of the wrong type is an error at its place", "[unit][config]") {
  LoadResult r = Parse("ui:\n  activity:\n    session_id: X-Session-ID\n" + kModels);
  CHECK_FALSE(r.ok());
  const Diagnostic* d = FindDiag(r, "ui.activity.session_id: expected a list");
  REQUIRE(d != nullptr);
  CHECK(d->severity == Diagnostic::Severity::kError);
  CHECK(At(d) == "3:17");
  CHECK_THAT(r.ErrorText(), Catch::Contains("config.yaml:3:17: "));

  LoadResult map = Parse("ui:\n  activity: [a]\n" + kModels);
  CHECK_FALSE(map.ok());
  CHECK(At(FindDiag(map, "ui.activity: expected a map")) == "2:13");

  LoadResult item = Parse("ui:\n  activity:\n    session_id: [{a: b}]\n" + kModels);
  CHECK_FALSE(item.ok());
  CHECK(FindDiag(item, "expected a string in the list") != nullptr);
}

TEST_CASE("other keys under ui are tolerated: warnings, errors only under --strict",
          "[unit][config]") {
  const std::string yaml =
      "ui:\n  theme: dark\n  activity:\n    columns: [a]\n    session_id: [X-S]\n" + kModels;
  LoadResult r = Parse(yaml);
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  CHECK(r.config->ui.session_id_headers == std::vector<std::string>{"X-S"});
  CHECK(At(FindDiag(r, "unknown key ui.theme")) == "2:3");
  CHECK(At(FindDiag(r, "unknown key ui.activity.columns")) == "4:5");
  CHECK_FALSE(Parse(yaml, {}, /*strict=*/true).ok());
}

}  // namespace
}  // namespace swapd::testing
