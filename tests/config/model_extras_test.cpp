// A model's filters.setParamsByID (keys with macros, keys as aliases, conflicts), capabilities
// (values and errors at their place) and its own healthCheckTimeout.
#include <catch2/catch.hpp>

#include "tests/config/config_test_util.h"

namespace swapd {
namespace {

using testing::At;
using testing::FindDiag;
using testing::Parse;

TEST_CASE("setParamsByID keys become aliases, expanded and checked", "[unit][config]") {
  auto r = Parse(R"yaml(
models:
  gemma:
    cmd: "srv --port ${PORT}"
    filters:
      setParamsByID:
        "${MODEL_ID}": {temperature: 1}
        "${MODEL_ID}:high": {effort: high, model: nope}
)yaml");
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  const ModelConfig& m = r.config->models.at("gemma");
  REQUIRE(m.set_params_by_id.size() == 2);
  CHECK(m.set_params_by_id.at("gemma").params == nlohmann::json{{"temperature", 1}});
  CHECK(m.set_params_by_id.at("gemma:high").params == nlohmann::json{{"effort", "high"}});
  CHECK(m.aliases == std::vector<std::string>{"gemma:high"});
  CHECK(r.config->FindModel("gemma:high") == &m);
  CHECK(At(FindDiag(r, "filters.setParamsByID.gemma:high: model is never overridden")) == "8:44");

  auto bad = Parse(R"yaml(
models:
  a:
    cmd: "srv --port ${PORT}"
    aliases: [shared]
  b:
    cmd: "srv --port ${PORT}"
    filters:
      setParamsByID:
        shared: {x: 1}
        a: {x: 2}
        "${nope}:x": {x: 3}
        list: [1]
)yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(At(FindDiag(bad,
                    "model \"b\": filters.setParamsByID \"shared\" is already an alias of "
                    "model \"a\"")) == "10:9");
  CHECK(At(FindDiag(bad, "filters.setParamsByID \"a\" is the id of model \"a\"")) == "11:9");
  CHECK(FindDiag(bad, "unknown macro ${nope}"));
  CHECK(At(FindDiag(bad, "filters.setParamsByID.list: expected a map of body keys")) == "13:15");
}

TEST_CASE("capabilities are read with macros; a wrong value is an error at its place",
          "[unit][config]") {
  auto r = Parse(R"yaml(
macros: {n: 8192}
models:
  m:
    cmd: "srv --port ${PORT}"
    capabilities: {in: [text, audio], out: [text], tools: true, context: "${n}"}
    healthCheckTimeout: 900
  other:
    cmd: "srv --port ${PORT}"
)yaml");
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  const ModelConfig& m = r.config->models.at("m");
  REQUIRE(m.capabilities);
  CHECK(m.capabilities->in == std::vector<std::string>{"text", "audio"});
  CHECK(m.capabilities->out == std::vector<std::string>{"text"});
  CHECK(m.capabilities->tools);
  CHECK_FALSE(m.capabilities->reranker);
  CHECK(m.capabilities->context == 8192);
  CHECK(m.health_check_timeout == std::chrono::seconds(900));
  CHECK_FALSE(r.config->models.at("other").health_check_timeout);
  CHECK(r.diagnostics.empty());

  auto bad = Parse(R"yaml(
models:
  m:
    cmd: "srv --port ${PORT}"
    capabilities: {in: [text, smell], tools: maybe, context: -1, colour: red}
    healthCheckTimeout: -5
)yaml",
                   {}, /*strict=*/true);
  REQUIRE_FALSE(bad.ok());
  CHECK(At(FindDiag(bad, "capabilities.in: unknown modality \"smell\"")) == "5:24");
  CHECK(At(FindDiag(bad, "capabilities.tools: expected true or false")) == "5:46");
  CHECK(At(FindDiag(bad, "capabilities.context: expected a number of tokens")) == "5:62");
  CHECK(FindDiag(bad, "unknown key capabilities.colour"));
  CHECK(At(FindDiag(bad, "healthCheckTimeout: must be >= 0")) == "6:25");
}

TEST_CASE("profiles: pins to ids or aliases, ~ disables, the list form is refused",
          "[unit][config]") {
  auto r = Parse(R"yaml(
models:
  big: {cmd: "srv --port ${PORT}"}
  small: {cmd: "srv --port ${PORT}", aliases: [tiny]}
profiles:
  coding:
    description: plan with the big one
    pins: {llm-plan: big, llm-fast: tiny, tiny: ~, off: ""}
)yaml");
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  const ProfileConfig& p = r.config->profiles.at("coding");
  CHECK(p.description == "plan with the big one");
  CHECK(p.pins == std::map<std::string, std::string>{
                      {"llm-plan", "big"}, {"llm-fast", "tiny"}, {"tiny", ""}, {"off", ""}});

  auto bad = Parse(R"yaml(
models:
  big: {cmd: "srv --port ${PORT}"}
profiles:
  old: [big]
  p:
    pins: {x: ghost, big: big, y: [1]}
)yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(At(FindDiag(bad, "profiles.old: a list of models is the old form")) == "5:8");
  CHECK(At(FindDiag(
            bad, "profiles.p.pins.x: \"ghost\" is not a model, alias, selector or peer model")) ==
        "7:15");
  CHECK(At(FindDiag(bad, "profiles.p.pins.big: a model id, which always wins")) == "7:22");
  CHECK(At(FindDiag(bad, "profiles.p: pins.y: expected a model id or alias")) == "7:35");
}

TEST_CASE("selectors: strategies, targets, no chaining, spillover targets run together",
          "[unit][config][selectors]") {
  auto r = Parse(R"yaml(
models:
  a: {cmd: "srv --port ${PORT}", aliases: [aa]}
  b: {cmd: "srv --port ${PORT}"}
  c: {cmd: "srv --port ${PORT}"}
groups:
  pair: {swap: false, members: [a, b]}
  solo: {members: [c]}
selectors:
  fast: {strategy: warm, targets: [aa, c], name: Fast, metadata: {tier: 1}}
  many: {strategy: spillover, targets: [a, b], settings: {spillover: 3}}
  newer: {strategy: balance, targets: [b, a], balance: {spillover: 2}}
)yaml");
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  const SelectorConfig& fast = r.config->selectors.at("fast");
  CHECK(fast.strategy == SelectorConfig::Strategy::kWarm);
  CHECK(fast.targets == std::vector<std::string>{"aa", "c"});
  CHECK(fast.name == "Fast");
  CHECK(fast.metadata["tier"] == 1);
  CHECK(r.config->selectors.at("many").spillover == 3);
  CHECK(r.config->selectors.at("newer").strategy == SelectorConfig::Strategy::kSpillover);
  CHECK(r.config->selectors.at("newer").spillover == 2);

  auto bad = Parse(R"yaml(
models:
  a: {cmd: "srv --port ${PORT}"}
  b: {cmd: "srv --port ${PORT}"}
selectors:
  a: {strategy: pin, targets: [b]}
  s1: {strategy: fastest, targets: [a]}
  s2: {strategy: pin, targets: [s3, ghost]}
  s3: {strategy: spillover, targets: [a, b], settings: {spillover: 0}}
  s4: {strategy: spillover, targets: [a, b]}
)yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(At(FindDiag(bad, "selectors.a: the id is already a model id, alias or peer model")) ==
        "6:3");
  CHECK(At(FindDiag(bad, "selectors.s1.strategy: expected pin, warm or spillover")) == "7:18");
  CHECK(At(FindDiag(bad, "\"s3\" is a selector (selectors cannot be chained)")) == "8:33");
  CHECK(At(FindDiag(bad, "selectors.s2.targets: \"ghost\" is not a model")) == "8:37");
  CHECK(At(FindDiag(bad, "selectors.s3.settings.spillover: expected an integer >= 1")) == "9:68");
  CHECK(At(FindDiag(bad, "selectors.s4.targets: spillover runs its targets at once")) == "10:38");
}

TEST_CASE("a matrix set holding all targets lets spillover run them together",
          "[unit][config][selectors]") {
  const std::string models = R"yaml(
models:
  a: {cmd: "srv --port ${PORT}"}
  b: {cmd: "srv --port ${PORT}"}
  c: {cmd: "srv --port ${PORT}"}
)yaml";
  auto ok = Parse(models +
                  "matrix: {sets: {s: \"(a & b) | c\"}}\n"
                  "selectors: {x: {strategy: spillover, targets: [b, a]}}\n");
  INFO(ok.ErrorText());
  CHECK(ok.ok());
  auto bad = Parse(models +
                   "matrix: {sets: {s: \"(a | b) & c\"}}\n"
                   "selectors: {x: {strategy: spillover, targets: [b, a]}}\n");
  CHECK(FindDiag(bad, "no matrix set holds them all"));
}

}  // namespace
}  // namespace swapd
