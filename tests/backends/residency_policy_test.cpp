// Unit tests of the memory budget's pure decision (FitToBudget): fits, evictions by cost and
// recency, pruning, protection, a model too big for any budget, GPUs as their own dimension, and
// a property test over random resident sets.
#include "backends/residency_policy.h"
#include "tests/support/sizes.h"

#include <catch2/catch.hpp>
#include <random>

namespace swapd {
namespace {

using testing::kGiB;

using Verdict = BudgetDecision::Verdict;

MemoryAmount Budget(uint64_t ram_gib, std::map<int, uint64_t> gpus_gib = {}) {
  MemoryAmount b;
  b.ram = ram_gib * kGiB;
  for (auto [gpu, gib] : gpus_gib) b.vram[gpu] = gib * kGiB;
  return b;
}

Footprint Gib(uint64_t ram, std::map<int, uint64_t> vram = {}) {
  Footprint f;
  f.ram = ram * kGiB;
  for (auto [gpu, gib] : vram) f.vram[gpu] = gib * kGiB;
  return f;
}

ResidentModel Resident(const std::string& id, Footprint cost, int64_t last_used,
                       bool protect = false) {
  ResidentModel r;
  r.model = id;
  r.cost = std::move(cost);
  r.last_used = last_used;
  r.protect = protect;
  return r;
}

TEST_CASE("a model that fits beside the resident ones evicts nothing", "[unit][budget]") {
  auto d = FitToBudget(Budget(14, {{0, 4}}), "third", Gib(2),
                       {Resident("big", Gib(9), 1), Resident("small", Gib(1, {{0, 3}}), 2)});
  CHECK(d.verdict == Verdict::kFits);
  CHECK(d.evict.empty());
}

TEST_CASE("the least recently used model that frees the exceeded memory goes first",
          "[unit][budget]") {
  auto d = FitToBudget(Budget(14), "new", Gib(6),
                       {Resident("old", Gib(5), 1), Resident("recent", Gib(5), 9)});
  CHECK(d.verdict == Verdict::kEvict);
  CHECK(d.evict == std::vector<std::string>{"old"});
  CHECK_THAT(d.why, Catch::Contains("budget") && Catch::Contains("ram"));
}

TEST_CASE("a model that frees no exceeded memory is not evicted", "[unit][budget]") {
  // Only GPU 0 is over: the CPU-only model (older) stays, the GPU one goes.
  auto d = FitToBudget(Budget(32, {{0, 4}}), "gpu-new", Gib(1, {{0, 3}}),
                       {Resident("cpu-old", Gib(10), 1), Resident("gpu-old", Gib(1, {{0, 3}}), 5)});
  CHECK(d.verdict == Verdict::kEvict);
  CHECK(d.evict == std::vector<std::string>{"gpu-old"});
}

TEST_CASE("victims the later choices make unnecessary are kept", "[unit][budget]") {
  // The small old model is taken first, then the big one alone would have been enough.
  auto d = FitToBudget(Budget(10), "new", Gib(6),
                       {Resident("tiny", Gib(1), 1), Resident("big", Gib(8), 2)});
  CHECK(d.verdict == Verdict::kEvict);
  CHECK(d.evict == std::vector<std::string>{"big"});
}

TEST_CASE("the evict cost orders victims before recency", "[unit][budget]") {
  ResidentModel cheap = Resident("cheap", Gib(5), 9);
  cheap.evict_cost = 0;
  auto d = FitToBudget(Budget(10), "new", Gib(5), {Resident("lru", Gib(5), 1), cheap});
  CHECK(d.evict == std::vector<std::string>{"cheap"});
}

TEST_CASE("a protected model is never chosen; the decision names it", "[unit][budget]") {
  auto d = FitToBudget(Budget(14), "stray", Gib(6),
                       {Resident("duo-cpu", Gib(10), 1, true), Resident("duo-gpu", Gib(1), 2)});
  CHECK(d.verdict == Verdict::kProtected);
  CHECK(d.protected_models == std::vector<std::string>{"duo-cpu"});
  CHECK(d.evict.empty());
  CHECK_THAT(d.why, Catch::Contains("duo-cpu") && Catch::Contains("swappable: false"));
}

TEST_CASE("a model larger than a budget is refused, naming the budget", "[unit][budget]") {
  auto d = FitToBudget(Budget(14, {{0, 4}}), "huge", Gib(2, {{0, 6}}), {});
  CHECK(d.verdict == Verdict::kTooBig);
  CHECK_THAT(d.why, Catch::Contains("gpu0 4.0 GiB") && Catch::Contains("gpu0 6.0 GiB"));
}

TEST_CASE("an unset dimension is unlimited", "[unit][budget]") {
  MemoryAmount gpu_only;
  gpu_only.vram[0] = 4 * kGiB;
  auto d = FitToBudget(gpu_only, "cpu", Gib(100), {Resident("other", Gib(100), 1)});
  CHECK(d.verdict == Verdict::kFits);
}

TEST_CASE("property: after the evictions the rest fits, and protected models stay",
          "[unit][budget]") {
  std::mt19937 rng(20261205);
  std::uniform_int_distribution<int> gib(0, 6), count(0, 7), coin(0, 3);
  for (int round = 0; round < 2000; ++round) {
    const MemoryAmount budget = Budget(16, {{0, 4}, {1, 8}});
    std::vector<ResidentModel> resident;
    for (int i = 0, n = count(rng); i < n; ++i) {
      resident.push_back(Resident("m" + std::to_string(i),
                                  Gib(gib(rng), {{0, gib(rng) / 3}, {1, gib(rng) / 2}}), gib(rng),
                                  coin(rng) == 0));
      resident.back().evict_cost = gib(rng) / 2;
    }
    const Footprint need = Gib(gib(rng), {{0, gib(rng) / 2}});
    const BudgetDecision d = FitToBudget(budget, "new", need, resident);
    Footprint rest = need;
    for (const ResidentModel& r : resident) {
      const bool evicted = std::find(d.evict.begin(), d.evict.end(), r.model) != d.evict.end();
      if (evicted) CHECK_FALSE(r.protect);
      if (!evicted) rest += r.cost;
    }
    switch (d.verdict) {
      case Verdict::kFits:
      case Verdict::kEvict:
        CHECK_FALSE(ExceedsBudget(budget, rest));
        break;
      case Verdict::kTooBig:
        CHECK(ExceedsBudget(budget, need));
        break;
      case Verdict::kProtected: {
        // Even with every unprotected model gone it would not fit.
        Footprint only_protected = need;
        for (const ResidentModel& r : resident) {
          if (r.protect) only_protected += r.cost;
        }
        CHECK(ExceedsBudget(budget, only_protected));
        CHECK_FALSE(d.protected_models.empty());
        break;
      }
    }
  }
}

}  // namespace
}  // namespace swapd
