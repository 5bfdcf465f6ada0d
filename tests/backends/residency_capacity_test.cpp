// Unit tests of MaxResidentModels (what /metrics reports as max_lora) and BudgetShare: groups of
// every kind, the matrix, memory budgets filled cheapest first, a model too big for the budget.
#include <catch2/catch.hpp>

#include "backends/residency_capacity.h"
#include "config/loader.h"
#include "tests/support/sizes.h"

namespace swapd {
namespace {

using testing::kGiB;

Config Parsed(const std::string& yaml) {
  LoadResult loaded = ParseConfig(yaml);
  INFO(loaded.ErrorText());
  REQUIRE(loaded.ok());
  return *loaded.config;
}

std::string Models(std::initializer_list<const char*> ids) {
  std::string out = "models:\n";
  for (const char* id : ids) out += std::string("  ") + id + ":\n    cmd: fake --port ${PORT}\n";
  return out;
}

// Each model's RAM cost in GiB.
std::map<std::string, Footprint> RamCosts(std::initializer_list<std::pair<const char*, int>> gib) {
  std::map<std::string, Footprint> costs;
  for (const auto& [model, n] : gib) costs[model].ram = n * kGiB;
  return costs;
}

TEST_CASE("max resident: ungrouped models swap, so one at a time", "[unit][capacity]") {
  const Config c = Parsed(Models({"a", "b", "c"}));
  CHECK(MaxResidentModels(c, {}, {}) == 1);
}

TEST_CASE("max resident: a swap: false group runs all its members", "[unit][capacity]") {
  const Config c = Parsed(Models({"a", "b", "c", "d"}) +
                          "groups:\n  duo:\n    swap: false\n    members: [a, b]\n");
  // duo is exclusive: it runs alone, both members; the ungrouped c, d swap (one of them).
  CHECK(MaxResidentModels(c, {}, {}) == 2);
}

TEST_CASE("max resident: persistent and non-exclusive groups run beside others",
          "[unit][capacity]") {
  const std::string groups =
      "groups:\n"
      "  always:\n    persistent: true\n    exclusive: false\n    members: [a, b]\n"
      "  side:\n    exclusive: false\n    swap: false\n    members: [c, d]\n"
      "  main:\n    members: [e, f]\n";
  const Config c = Parsed(Models({"a", "b", "c", "d", "e", "f"}) + groups);
  // always (a or b) beside side (c and d): 3; beside main (e or f): 2.
  CHECK(MaxResidentModels(c, {}, {}) == 3);
}

TEST_CASE("max resident: exclusive persistent groups run together", "[unit][capacity]") {
  const std::string groups =
      "groups:\n"
      "  p1:\n    persistent: true\n    swap: false\n    members: [a, b]\n"
      "  p2:\n    persistent: true\n    members: [c, d]\n"
      "  side:\n    exclusive: false\n    members: [e]\n";
  const Config c = Parsed(Models({"a", "b", "c", "d", "e"}) + groups);
  // p1 (a and b) and p2 (c or d): 3; side is not persistent, so the exclusive groups stop it.
  CHECK(MaxResidentModels(c, {}, {}) == 3);
}

TEST_CASE("max resident: budgets admit the cheapest models that fit together", "[unit][capacity]") {
  // With a budget the default group neither swaps nor is exclusive (config/validate.cpp).
  const Config c = Parsed(Models({"a", "b", "c", "d"}) + "memory:\n  ram: 10GiB\n");
  MemoryAmount budget;
  budget.ram = 10 * kGiB;
  std::map<std::string, Footprint> costs =
      RamCosts({{"a", 6}, {"b", 4}, {"c", 3}, {"d", 11}});  // d alone is too big: never resident
  // b and c (7 GiB), then a does not fit; d never does.
  CHECK(MaxResidentModels(c, costs, budget) == 2);
  budget.ram = 13 * kGiB;
  CHECK(MaxResidentModels(c, costs, budget) == 3);
  SECTION("a GPU budget limits too") {
    budget.vram[0] = 4 * kGiB;
    costs["b"].vram[0] = 3 * kGiB;
    costs["c"].vram[0] = 3 * kGiB;
    CHECK(MaxResidentModels(c, costs, budget) == 2);  // a with b or c
  }
  SECTION("unknown costs count as nothing") { CHECK(MaxResidentModels(c, {}, budget) == 4); }
}

TEST_CASE("max resident: the matrix's largest combination", "[unit][capacity]") {
  const Config c = Parsed(Models({"g", "q", "d", "e", "big"}) +
                          "routing:\n  router:\n    use: matrix\n    settings:\n      matrix:\n"
                          "        sets:\n"
                          "          desk: \"(g | q) & d & e\"\n"
                          "          deep: \"big & e\"\n");
  CHECK(MaxResidentModels(c, {}, {}) == 3);
  MemoryAmount budget;
  budget.ram = 8 * kGiB;
  const std::map<std::string, Footprint> costs =
      RamCosts({{"g", 5}, {"q", 5}, {"d", 1}, {"e", 1}, {"big", 7}});
  CHECK(MaxResidentModels(c, costs, budget) == 3);
  budget.ram = 6 * kGiB;
  CHECK(MaxResidentModels(c, costs, budget) == 2);  // d & e; or g & one of them
}

TEST_CASE("budget share: the fullest budgeted dimension", "[unit][capacity]") {
  MemoryAmount budget;
  Footprint cost;
  cost.ram = 2 * kGiB;
  cost.vram[0] = 3 * kGiB;
  cost.vram[1] = 8 * kGiB;  // GPU 1 has no budget: not weighed
  CHECK(BudgetShare(budget, cost) == 0);
  budget.ram = 8 * kGiB;
  CHECK(BudgetShare(budget, cost) == Approx(0.25));
  budget.vram[0] = 4 * kGiB;
  CHECK(BudgetShare(budget, cost) == Approx(0.75));
}

}  // namespace
}  // namespace swapd
