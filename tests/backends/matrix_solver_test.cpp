// The matrix solver: llama-swap's documented example, the least-recently-used and definition-order
// tie-breaks, busy and stopping models, and a property test against the brute-force expansion of
// random small configs (same evictions, same cost, same set).
#include "backends/matrix_solver.h"

#include <catch2/catch.hpp>
#include <limits>
#include <optional>
#include <random>
#include <tuple>

namespace swapd {
namespace {

using Names = std::vector<std::string>;

MatrixExpr Leaf(std::string model) {
  MatrixExpr e;
  e.model = std::move(model);
  return e;
}
MatrixExpr Node(MatrixExpr::Kind kind, std::vector<MatrixExpr> children) {
  MatrixExpr e;
  e.kind = kind;
  e.children = std::move(children);
  return e;
}
MatrixExpr All(std::vector<MatrixExpr> c) { return Node(MatrixExpr::Kind::kAll, std::move(c)); }
MatrixExpr Any(std::vector<MatrixExpr> c) { return Node(MatrixExpr::Kind::kAny, std::move(c)); }

MatrixConfig Sets(std::vector<std::pair<std::string, MatrixExpr>> sets) {
  MatrixConfig c;
  for (auto& [name, expr] : sets) c.sets.push_back(MatrixSet{name, name + "-dsl", std::move(expr)});
  return c;
}

TEST_CASE("llama-swap's example: swap within a set, a big model evicts all", "[unit][matrix]") {
  // standard: "(g | q | m) & v", full: "big"
  MatrixConfig c = Sets({{"standard", All({Any({Leaf("g"), Leaf("q"), Leaf("m")}), Leaf("v")})},
                         {"full", Leaf("big")}});
  c.evict_costs["big"] = 10;
  MatrixSolver solver(c);
  auto d = solver.Choose("q", {{"g", 1, 5}, {"v", 1, 6}});
  CHECK(d.set == "standard");
  CHECK(d.evict == Names{"g"});
  CHECK(d.cost == 1);
  CHECK(d.Describe("q") ==
        "matrix: model=q set=standard dsl=\"standard-dsl\" evict=[g] cost=1 (the only choice)");

  d = solver.Choose("big", {{"g", 1, 5}, {"v", 1, 6}});
  CHECK(d.set == "full");
  CHECK(d.evict == Names{"g", "v"});
  CHECK(d.cost == 2);

  // Already running beside a compatible model: nothing to evict.
  CHECK(solver.Choose("v", {{"q", 1, 1}}).evict.empty());
  CHECK(solver.CanCoexist({"q", "v"}));
  CHECK_FALSE(solver.CanCoexist({"q", "g"}));
  CHECK_FALSE(solver.CanCoexist({"big", "v"}));
}

TEST_CASE("a model in no set runs alone", "[unit][matrix]") {
  MatrixSolver solver(Sets({{"s", All({Leaf("a"), Leaf("b")})}}));
  auto d = solver.Choose("loner", {{"a", 1, 1}, {"b", 4, 2}});
  CHECK_FALSE(d.in_a_set);
  CHECK(d.evict == Names{"a", "b"});
  CHECK(d.cost == 5);
  CHECK(d.Describe("loner") == "matrix: model=loner is in no set, runs alone: evict=[a, b] cost=5");
  // And a model in a set evicts one that is in none.
  CHECK(solver.Choose("a", {{"loner", 1, 1}}).evict == Names{"loner"});
}

TEST_CASE("least cost first, then least recently used, then definition order", "[unit][matrix]") {
  // with-b: a & b; with-c: a & c. Asking for a while b and c run evicts one of them.
  MatrixConfig c =
      Sets({{"with-b", All({Leaf("a"), Leaf("b")})}, {"with-c", All({Leaf("a"), Leaf("c")})}});
  SECTION("the cheaper eviction wins") {
    c.evict_costs["b"] = 3;
    auto d = MatrixSolver(c).Choose("a", {{"b", 3, 1}, {"c", 1, 9}});
    CHECK(d.set == "with-b");
    CHECK(d.evict == Names{"c"});
    CHECK(d.why == "least eviction cost; next best set with-c costs 3");
  }
  SECTION("equal costs: the least recently used model goes, whatever the set order") {
    auto d = MatrixSolver(c).Choose("a", {{"b", 1, 5}, {"c", 1, 9}});
    CHECK(d.set == "with-c");
    CHECK(d.evict == Names{"b"});
    CHECK(d.why == "tie on cost with set with-b, broken by least recently used");
    d = MatrixSolver(c).Choose("a", {{"b", 1, 9}, {"c", 1, 5}});
    CHECK(d.set == "with-b");
    CHECK(d.evict == Names{"c"});
  }
  SECTION("a busy model is the last to go; a stopping one the first") {
    const int64_t busy = std::numeric_limits<int64_t>::max();
    auto d = MatrixSolver(c).Choose("a", {{"b", 1, busy}, {"c", 1, 1}});
    CHECK(d.evict == Names{"c"});
    d = MatrixSolver(c).Choose("a", {{"b", 1, 7}, {"c", 0, 9}});
    CHECK(d.evict == Names{"c"});
    CHECK(d.cost == 0);
  }
  SECTION("a full tie goes to the set defined first") {
    auto d = MatrixSolver(c).Choose("a", {{"b", 1, 4}, {"c", 1, 4}});
    CHECK(d.set == "with-b");
    CHECK(d.evict == Names{"c"});
    CHECK(d.why == "tie with set with-c, broken by definition order");
  }
}

TEST_CASE("a large product is decided without expanding it", "[unit][matrix]") {
  // 12 sets over 20 models, each set a product of five 4-way choices: 4^5 = 1024 combinations per
  // set. The solver only looks at the target and the running models.
  std::vector<std::pair<std::string, MatrixExpr>> sets;
  for (int s = 0; s < 12; ++s) {
    std::vector<MatrixExpr> factors;
    for (int f = 0; f < 5; ++f) {
      std::vector<MatrixExpr> choices;
      for (int k = 0; k < 4; ++k)
        choices.push_back(Leaf("m" + std::to_string((s + f * 4 + k) % 20)));
      factors.push_back(Any(std::move(choices)));
    }
    sets.emplace_back("s" + std::to_string(s), All(std::move(factors)));
  }
  MatrixSolver solver(Sets(std::move(sets)));
  auto d = solver.Choose("m0", {{"m4", 1, 1}, {"m8", 1, 2}, {"m12", 1, 3}, {"m16", 1, 4}});
  CHECK(d.set == "s0");  // s0 = (m0|m1|m2|m3) & (m4|..) & (m8|..) & (m12|..) & (m16|..)
  CHECK(d.evict.empty());
  CHECK(solver.CanCoexist({"m0", "m4", "m8", "m12", "m16"}));
  // Every set holds one model from each of its five factors, so no six models run together.
  CHECK_FALSE(solver.CanCoexist({"m0", "m1", "m2", "m3", "m4", "m5"}));
}

// ---- Property test: the solver against the brute-force expansion.

struct Brute {
  int64_t cost;
  int64_t newest;
  size_t set;
  Names evict;
  bool operator<(const Brute& o) const {
    return std::tie(cost, newest, set) != std::tie(o.cost, o.newest, o.set)
               ? std::tie(cost, newest, set) < std::tie(o.cost, o.newest, o.set)
           : evict.size() != o.evict.size() ? evict.size() < o.evict.size()
                                            : evict < o.evict;
  }
};

std::optional<Brute> BruteForce(const MatrixConfig& c, const std::string& target,
                                const std::vector<MatrixResident>& running) {
  std::optional<Brute> best;
  for (size_t i = 0; i < c.sets.size(); ++i) {
    for (const Names& combo : ExpandMatrixExpr(c.sets[i].expr, SIZE_MAX, nullptr)) {
      if (std::find(combo.begin(), combo.end(), target) == combo.end()) continue;
      Brute b{0, std::numeric_limits<int64_t>::min(), i, {}};
      for (const MatrixResident& r : running) {
        if (std::find(combo.begin(), combo.end(), r.model) != combo.end()) continue;
        b.cost += r.cost;
        b.newest = std::max(b.newest, r.last_used);
        b.evict.push_back(r.model);
      }
      std::sort(b.evict.begin(), b.evict.end());
      if (!best || b < *best) best = b;
    }
  }
  return best;
}

MatrixExpr RandomExpr(std::mt19937& rng, int depth, const std::vector<MatrixExpr>& earlier) {
  std::uniform_int_distribution<int> pick(0, 9);
  const int roll = pick(rng);
  if (depth == 0 || roll < 3) return Leaf("m" + std::to_string(pick(rng) % 6));
  if (roll == 3 && !earlier.empty()) return earlier[pick(rng) % earlier.size()];  // a +ref
  std::vector<MatrixExpr> children;
  const int n = 2 + pick(rng) % 3;
  for (int i = 0; i < n; ++i) children.push_back(RandomExpr(rng, depth - 1, earlier));
  return roll < 7 ? All(std::move(children)) : Any(std::move(children));
}

TEST_CASE("the solver agrees with brute-force expansion on random configs", "[unit][matrix]") {
  std::mt19937 rng(20261204);
  std::uniform_int_distribution<int> small(0, 3);
  for (int round = 0; round < 1500; ++round) {
    MatrixConfig c;
    std::vector<MatrixExpr> earlier;
    const int sets = 1 + small(rng);
    for (int s = 0; s < sets; ++s) {
      MatrixExpr e = RandomExpr(rng, 3, earlier);
      earlier.push_back(e);
      c.sets.push_back(MatrixSet{"s" + std::to_string(s), "", std::move(e)});
    }
    std::vector<MatrixResident> running;
    for (int m = 0; m < 6; ++m) {
      if (small(rng) < 2) running.push_back({"m" + std::to_string(m), small(rng), small(rng)});
    }
    const std::string target = "m" + std::to_string(small(rng));
    std::erase_if(running, [&](const MatrixResident& r) { return r.model == target; });

    INFO("round " << round);
    MatrixDecision d = MatrixSolver(c).Choose(target, running);
    std::optional<Brute> b = BruteForce(c, target, running);
    REQUIRE(d.in_a_set == b.has_value());
    if (!b) {
      CHECK(d.evict.size() == running.size());
      continue;
    }
    CHECK(d.evict == b->evict);
    CHECK(d.cost == b->cost);
    CHECK(d.set == c.sets[b->set].name);
  }
}

}  // namespace
}  // namespace swapd
