// The matrix router's configuration: the set language, vars, costs, references and every error
// with its file:line:col; the legacy and the routing spelling; the FIFO priorities.
#include <catch2/catch.hpp>

#include "config/matrix.h"
#include "tests/config/config_test_util.h"

namespace swapd {
namespace {

using testing::At;
using testing::FindDiag;
using testing::Parse;
using Combos = std::vector<std::vector<std::string>>;

constexpr const char* kMatrixModels = R"yaml(
models:
  gemma: {cmd: "srv --port ${PORT}"}
  qwen: {cmd: "srv --port ${PORT}", aliases: [q]}
  mistral: {cmd: "srv --port ${PORT}"}
  voice: {cmd: "srv --port ${PORT}"}
  big: {cmd: "srv --port ${PORT}"}
)yaml";

Combos Expanded(const MatrixExpr& e) { return ExpandMatrixExpr(e, 1000, nullptr); }

MatrixExpr ParseOk(std::string_view dsl) {
  auto r = ParseMatrixExpr(dsl);
  REQUIRE(std::holds_alternative<MatrixExpr>(r));
  return std::get<MatrixExpr>(r);
}

TEST_CASE("the set language: & binds tighter than |, parentheses group", "[unit][config]") {
  CHECK(Expanded(ParseOk("(a | b) & (c | d)")) ==
        Combos{{"a", "c"}, {"b", "c"}, {"a", "d"}, {"b", "d"}});
  CHECK(Expanded(ParseOk("a | b & c")) == Combos{{"a"}, {"b", "c"}});
  CHECK(Expanded(ParseOk("  x.1-y_z  ")) == Combos{{"x.1-y_z"}});
  CHECK(Expanded(ParseOk("a & a")) == Combos{{"a"}});
  CHECK(ParseOk("+other & a").children[0].model == "+other");

  auto error = [](std::string_view dsl) {
    auto r = ParseMatrixExpr(dsl);
    REQUIRE(std::holds_alternative<MatrixParseError>(r));
    return std::get<MatrixParseError>(r);
  };
  CHECK(error("").message == "the expression is empty");
  CHECK(error("a & & b").offset == 4);
  CHECK(error("(a | b").message == "missing ')'");
  CHECK(error("a b").offset == 2);
  CHECK(error("a + b").message == "unexpected '+'");
  CHECK(error("a | + (b)").message == "'+' must be followed by the name of a set");
  CHECK(error("org/model").offset == 3);
}

TEST_CASE("routing.router.use: matrix reads vars, costs and sets in order", "[unit][config]") {
  auto r = Parse(std::string(kMatrixModels) + R"yaml(
routing:
  router:
    use: matrix
    settings:
      matrix:
        vars: {g: gemma, m: mistral, v: voice, qwen: gemma}
        evict_costs: {big: 10, g: 3}
        sets:
          standard: "(g | q | m) & v"
          full: big
          mixed: "+standard | qwen & mistral"
)yaml");
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  CHECK(r.diagnostics.empty());
  REQUIRE(r.config->matrix);
  const MatrixConfig& m = *r.config->matrix;
  REQUIRE(m.sets.size() == 3);
  CHECK(m.sets[0].name == "standard");
  CHECK(m.sets[0].dsl == "(g | q | m) & v");
  // Vars and aliases become model ids; a var shadows a model of the same name.
  CHECK(Expanded(m.sets[0].expr) ==
        Combos{{"gemma", "voice"}, {"qwen", "voice"}, {"mistral", "voice"}});
  CHECK(Expanded(m.sets[2].expr) ==
        Combos{{"gemma", "voice"}, {"qwen", "voice"}, {"mistral", "voice"}, {"gemma", "mistral"}});
  CHECK(m.EvictCost("big") == 10);
  CHECK(m.EvictCost("gemma") == 3);
  CHECK(m.EvictCost("voice") == 1);
}

TEST_CASE("the legacy top-level matrix works the same", "[unit][config]") {
  auto r = Parse(std::string(kMatrixModels) + "matrix:\n  sets:\n    s: gemma & voice\n");
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  REQUIRE(r.config->matrix);
  CHECK(Expanded(r.config->matrix->sets[0].expr) == Combos{{"gemma", "voice"}});
}

TEST_CASE("matrix errors name the file, line and column", "[unit][config]") {
  auto r = Parse(std::string(kMatrixModels) + R"yaml(matrix:
  vars:
    "x y": gemma
    z: ghost
  evict_costs:
    voice: 0
    nobody: 3
  sets:
    one: "+two & gemma"
    two: "+one | voice"
    three: "gemma & (voice | nope)"
    four: "gemma & & voice"
    five: +missing
)yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(At(FindDiag(r, "matrix.vars: \"x y\" must be 1 to 32")) == "10:5");
  CHECK(At(FindDiag(r, "matrix.vars.z: unknown model \"ghost\"")) == "11:8");
  CHECK(At(FindDiag(r, "matrix.evict_costs.voice: expected a positive integer")) == "13:12");
  CHECK(At(FindDiag(r, "matrix.evict_costs: unknown var or model \"nobody\"")) == "14:5");
  CHECK(At(FindDiag(r, "matrix.sets.one: \"+two\" makes a cycle")) == "16:11");
  CHECK(At(FindDiag(r, "matrix.sets.three: unknown var or model \"nope\"")) == "18:30");
  CHECK(At(FindDiag(r, "matrix.sets.four: unexpected '&'")) == "19:20");
  CHECK(At(FindDiag(r, "matrix.sets.five: unknown set \"missing\"")) == "20:11");
}

TEST_CASE("a matrix needs a set; use: matrix needs the matrix; styles never mix",
          "[unit][config]") {
  auto empty = Parse(std::string(kMatrixModels) + "matrix:\n  vars: {g: gemma}\n");
  REQUIRE_FALSE(empty.ok());
  CHECK(At(FindDiag(empty, "matrix: at least one set is required")) == "8:1");

  auto missing = Parse(std::string(kMatrixModels) + R"yaml(
routing:
  router:
    use: matrix
    settings:
      groups: {g: {members: [gemma]}}
)yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK(At(FindDiag(missing,
                    "routing.router.use is matrix but routing.router.settings.matrix "
                    "is missing")) == "11:10");
  CHECK(FindDiag(missing, "routing.router.settings.groups: ignored, routing.router.use is matrix"));

  auto mixed = Parse(std::string(kMatrixModels) + R"yaml(matrix:
  sets: {s: gemma}
routing:
  router:
    use: matrix
)yaml");
  REQUIRE_FALSE(mixed.ok());
  CHECK(FindDiag(mixed, "routing.router cannot be used together with the top-level matrix"));

  auto unknown =
      Parse(std::string(kMatrixModels) + "matrix:\n  sets: {s: gemma}\n  evict: {}\n", {},
            /*strict=*/true);
  REQUIRE_FALSE(unknown.ok());
  CHECK(FindDiag(unknown, "unknown key matrix.evict"));
}

TEST_CASE("routing.scheduler fifo priorities go to their models", "[unit][config]") {
  auto r = Parse(std::string(kMatrixModels) + R"yaml(
routing:
  scheduler:
    use: fifo
    settings:
      fifo:
        priority: {voice: 10, q: 5}
)yaml");
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  CHECK(r.diagnostics.empty());
  CHECK(r.config->models.at("voice").priority == 10);
  CHECK(r.config->models.at("qwen").priority == 5);
  CHECK(r.config->models.at("gemma").priority == 0);

  auto bad = Parse(std::string(kMatrixModels) + R"yaml(
routing:
  scheduler:
    use: lifo
    settings: {fifo: {priority: {ghost: 1}}}
)yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(At(FindDiag(bad, "routing.scheduler.use: the only scheduler is fifo")) == "11:10");
  CHECK(At(FindDiag(bad, "priority: unknown model \"ghost\"")) == "12:34");
}

}  // namespace
}  // namespace swapd
