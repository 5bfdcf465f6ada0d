// Groups, the implicit (default) group, aliases and preload.
#include <catch2/catch.hpp>

#include "tests/config/config_test_util.h"

namespace swapd {
namespace {

using testing::At;
using testing::FindDiag;
using testing::Parse;
using Severity = Diagnostic::Severity;
using Words = std::vector<std::string>;

constexpr const char* kModels = R"(
models:
  a:
    cmd: srv --port ${PORT}
  b:
    cmd: srv --port ${PORT}
  c:
    cmd: srv --port ${PORT}
)";

TEST_CASE("Groups get llama-swap's defaults; the others go to (default)", "[unit][config]") {
  auto r = Parse(std::string(kModels) + R"(
groups:
  duo:
    swap: false
    exclusive: true
    members: [b, a]
)");
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  const Config& c = *r.config;
  REQUIRE(c.groups.size() == 2);
  const GroupConfig& duo = c.groups.at("duo");
  CHECK_FALSE(duo.swap);
  CHECK(duo.exclusive);
  CHECK_FALSE(duo.persistent);
  CHECK(duo.members == Words{"b", "a"});
  CHECK(duo.pos.ToString() == "config.yaml:11:3");
  const GroupConfig& def = c.groups.at(std::string(kDefaultGroup));
  CHECK(def.swap);
  CHECK(def.exclusive);
  CHECK(def.members == Words{"c"});
  CHECK(c.models.at("a").group == "duo");
  CHECK(c.models.at("c").group == kDefaultGroup);
  CHECK(&c.GroupOf(c.models.at("b")) == &duo);
}

TEST_CASE("Group defaults are swap, exclusive, not persistent", "[unit][config]") {
  auto r = Parse(std::string(kModels) + "groups:\n  all:\n    members: [a, b, c]\n");
  REQUIRE(r.ok());
  const GroupConfig& g = r.config->groups.at("all");
  CHECK(g.swap);
  CHECK(g.exclusive);
  CHECK_FALSE(g.persistent);
  CHECK(r.config->groups.count(std::string(kDefaultGroup)) == 0);  // nobody is ungrouped
  CHECK(FindDiag(r, "exclusive by default") == nullptr);           // nothing else to unload
}

TEST_CASE("A group that is exclusive by default gets a hint when it unloads others",
          "[unit][config]") {
  auto r = Parse(std::string(kModels) + R"(
groups:
  pair:
    swap: false
    members: [a, b]
)");
  REQUIRE(r.ok());
  const Diagnostic* d = FindDiag(r, "group \"pair\" is exclusive by default");
  REQUIRE(d);
  CHECK(d->severity == Severity::kHint);
  CHECK(At(d) == "11:3");

  auto persistent_rest = Parse(std::string(kModels) + R"(
groups:
  pair:
    members: [a, b]
  keep:
    persistent: true
    members: [c]
)");
  REQUIRE(persistent_rest.ok());
  CHECK(FindDiag(persistent_rest, "group \"pair\" is exclusive by default") == nullptr);
}

TEST_CASE("routing.router.settings.groups is read like groups", "[unit][config]") {
  auto r = Parse(std::string(kModels) + R"(
routing:
  router:
    use: group
    settings:
      groups:
        resident:
          persistent: true
          swap: false
          exclusive: false
          members: [a, c]
)");
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  const GroupConfig& g = r.config->groups.at("resident");
  CHECK(g.persistent);
  CHECK_FALSE(g.swap);
  CHECK_FALSE(g.exclusive);
  CHECK(r.config->models.at("b").group == kDefaultGroup);
}

TEST_CASE("groups and routing.router together are an error", "[unit][config]") {
  auto r = Parse(std::string(kModels) + R"(
groups:
  g: {members: [a]}
routing:
  router:
    settings:
      groups:
        h: {members: [b]}
)");
  REQUIRE_FALSE(r.ok());
  CHECK(At(FindDiag(r, "routing.router cannot be used together with the top-level groups")) ==
        "13:3");
}

TEST_CASE("matrix together with groups is an error", "[unit][config]") {
  auto both =
      Parse(std::string(kModels) + "matrix:\n  vars: {x: a}\ngroups:\n  g: {members: [a]}\n");
  REQUIRE_FALSE(both.ok());
  CHECK(FindDiag(both, "cannot use both groups and matrix"));
}

TEST_CASE("Group members must be models, once, in one group", "[unit][config]") {
  auto r = Parse(std::string(kModels) + R"(
  d:
    cmd: srv --port ${PORT}
    aliases: [dee]
groups:
  one:
    members: [a, ghost, a, dee]
  two:
    members: [b, a]
  (default):
    members: [c]
)");
  REQUIRE_FALSE(r.ok());
  CHECK(At(FindDiag(r, "group \"one\": member \"ghost\" is not a model")) == "15:18");
  CHECK(At(FindDiag(r, "group \"one\": member \"a\" is listed twice")) == "15:25");
  CHECK(FindDiag(r, "member \"dee\" is not a model (it is an alias of model \"d\"")->pos.line ==
        15);
  CHECK(At(FindDiag(r, "model \"a\" is in two groups: \"one\" and \"two\"")) == "17:18");
  CHECK(At(FindDiag(r, "the name (default) is reserved")) == "18:3");
}

TEST_CASE("Aliases are unique and never a model id", "[unit][config]") {
  auto r = Parse(R"(
models:
  a:
    cmd: srv --port ${PORT}
    aliases: [shared, b, a]
  b:
    cmd: srv --port ${PORT}
    aliases: [shared, mine, mine]
)");
  REQUIRE_FALSE(r.ok());
  CHECK(At(FindDiag(r, "model \"a\": alias \"b\" is the id of model \"b\"")) == "5:23");
  CHECK(At(FindDiag(r, "model \"a\": alias \"a\" is the id of the model itself")) == "5:26");
  CHECK(At(FindDiag(r, "model \"b\": alias \"shared\" is already an alias of model \"a\"")) ==
        "8:15");
  CHECK(At(FindDiag(r, "model \"b\": alias \"mine\" is listed twice")) == "8:29");
}

TEST_CASE("preload takes model ids and aliases; unknown ones are errors", "[unit][config]") {
  auto r = Parse(std::string(kModels) + R"(
hooks:
  on_startup:
    preload: [c, nope]
)");
  REQUIRE_FALSE(r.ok());
  CHECK(At(FindDiag(r, "hooks.on_startup.preload: \"nope\" is not a model or alias")) == "12:18");
}

}  // namespace
}  // namespace swapd
