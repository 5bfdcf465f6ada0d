// Unit tests of the Scheduler under memory budgets: the duo kept by budgets instead of a group,
// budget evictions and their reason, protection (refused with Retry-After, or waiting), a model
// too big for the budget, the rebalance after a larger measurement, and a property test over
// random event sequences: the running models never exceed a budget, protected ones never stop to
// make room, nor does a model within its minResidency.
#include <catch2/catch.hpp>
#include <random>

#include "backends/scheduler.h"
#include "tests/backends/scheduler_fakes.h"
#include "tests/support/sizes.h"

namespace swapd {
namespace {

using testing::ConfigBuilder;
using testing::Log;

using testing::kGiB;

// The laptop of examples/duo.yaml with budgets instead of a group: 14 GiB of RAM, a 4 GiB GPU.
Config BudgetDuo() {
  Config c = ConfigBuilder()
                 .Model("duo-cpu")
                 .Model("duo-gpu")
                 .Model("small")
                 .Model("solo", "", 10, /*ttl_seconds=*/30)
                 .Build();
  c.memory.budget.ram = 14 * kGiB;
  c.memory.budget.vram[0] = 4 * kGiB;
  // As config/validate.cpp makes it with a budget: ungrouped models do not swap each other.
  c.groups[std::string(kDefaultGroup)].swap = false;
  c.groups[std::string(kDefaultGroup)].exclusive = false;
  c.models["duo-cpu"].memory.ram = 10 * kGiB;
  c.models["duo-gpu"].memory.ram = 1 * kGiB;
  c.models["duo-gpu"].memory.vram[0] = 3 * kGiB;
  c.models["small"].memory.ram = 2 * kGiB;
  c.models["solo"].memory.ram = 12 * kGiB;
  c.models["solo"].memory.vram[0] = 3 * kGiB;
  return c;
}

struct MemoryHarness : testing::SwapHarness {
  using SwapHarness::SwapHarness;
  // Runs the duo and finishes its requests: the cpu model is the least recently used.
  void Duo() {
    RunAndFinish(1, "duo-cpu");
    RunAndFinish(2, "duo-gpu");
    REQUIRE(scheduler.Phase("duo-cpu") == ModelPhase::kReady);
    REQUIRE(scheduler.Phase("duo-gpu") == ModelPhase::kReady);
  }
};

TEST_CASE("budget: a third model that fits in what is free does not unload the duo",
          "[unit][scheduler][budget]") {
  MemoryHarness h(BudgetDuo());
  h.Duo();
  h.scheduler.RequestArrived(3, "small");
  CHECK(h.effects.Take() == Log{"start small"});
  h.scheduler.StartFinished("small", Status::Ok(), h.now);
  CHECK(h.effects.Take() == Log{"admit 3"});
  CHECK(h.scheduler.Phase("duo-cpu") == ModelPhase::kReady);
  CHECK(h.scheduler.Phase("duo-gpu") == ModelPhase::kReady);
}

TEST_CASE("budget: a model that does not fit evicts what it must, with reason budget",
          "[unit][scheduler][budget]") {
  MemoryHarness h(BudgetDuo());
  h.Duo();
  h.scheduler.RequestArrived(3, "solo");  // 12 GiB + gpu 3 GiB: both duo members must go
  CHECK(h.effects.Take() == Log{"stop duo-cpu", "stop duo-gpu"});
  CHECK(h.effects.StopReasonOf("duo-cpu") == "budget");
  CHECK(h.effects.StopReasonOf("duo-gpu") == "budget");
  REQUIRE_FALSE(h.effects.explained_.empty());
  CHECK_THAT(h.effects.explained_.back(), Catch::Contains("evict [duo-cpu, duo-gpu]"));
  h.scheduler.StopFinished("duo-cpu");
  CHECK(h.effects.Take().empty());  // starts only when every eviction completed
  h.scheduler.StopFinished("duo-gpu");
  CHECK(h.effects.Take() == Log{"start solo"});
}

TEST_CASE("budget: only the least recently used model that is enough goes",
          "[unit][scheduler][budget]") {
  Config c = BudgetDuo();
  c.models["small"].memory.ram = 5 * kGiB;  // 10 + 1 + 5 > 14
  MemoryHarness h(c);
  h.RunAndFinish(1, "duo-gpu");
  h.RunAndFinish(2, "duo-cpu");  // the cpu model is the most recent now
  h.scheduler.RequestArrived(3, "small");
  // The gpu model is older, but freeing its 1 GiB is not enough; the cpu model's 10 GiB are
  // enough alone, so the gpu model is kept.
  CHECK(h.effects.Take() == Log{"stop duo-cpu"});
}

TEST_CASE("budget: a protected model is not evicted; the request is refused with Retry-After",
          "[unit][scheduler][budget]") {
  Config c = BudgetDuo();
  c.models["duo-cpu"].swappable = false;
  c.models["duo-cpu"].ttl = std::chrono::seconds(600);
  MemoryHarness h(c);
  h.Duo();
  h.scheduler.RequestArrived(3, "solo");
  CHECK(h.effects.Take() == Log{"reject 3"});
  const Status& why = h.effects.Rejection(3);
  CHECK(why.code() == ErrorCode::kUnavailable);
  CHECK_THAT(why.message(), Catch::Contains("duo-cpu") && Catch::Contains("swappable: false"));
  CHECK(why.retry_after_seconds() == 60);  // its ttl (600 s) is longer than a minute
  CHECK(h.scheduler.Phase("duo-cpu") == ModelPhase::kReady);
  CHECK(h.scheduler.Phase("duo-gpu") == ModelPhase::kReady);  // nothing was stopped for nothing
}

TEST_CASE("budget: a request with an evictProtectedKeys key may evict a protected model",
          "[unit][scheduler][budget]") {
  Config c = BudgetDuo();
  c.models["duo-cpu"].swappable = false;
  MemoryHarness h(c);
  h.Duo();
  h.scheduler.RequestArrived(3, "solo", /*evict_protected=*/true);
  CHECK(h.effects.Take() == Log{"stop duo-cpu", "stop duo-gpu"});
  CHECK(h.effects.StopReasonOf("duo-cpu") == "budget");
  CHECK_THAT(h.effects.explained_.back(), Catch::Contains("evictProtectedKeys"));
  h.scheduler.StopFinished("duo-cpu");
  h.scheduler.StopFinished("duo-gpu");
  CHECK(h.effects.Take() == Log{"start solo"});
}

TEST_CASE("budget: with onProtected wait, the request waits until the protected model goes",
          "[unit][scheduler][budget]") {
  Config c = BudgetDuo();
  c.models["duo-cpu"].swappable = false;
  c.memory.wait_for_protected = true;
  MemoryHarness h(c);
  h.Duo();
  h.scheduler.RequestArrived(3, "solo");
  CHECK(h.effects.Take().empty());
  CHECK(h.scheduler.Queued("solo") == 1);
  h.scheduler.Unload("duo-cpu");  // an operator frees it (a ttl would too)
  CHECK(h.effects.Take() == Log{"stop duo-cpu", "stop duo-gpu"});
  CHECK(h.effects.StopReasonOf("duo-cpu") == "unload");
  h.scheduler.StopFinished("duo-cpu");
  h.scheduler.StopFinished("duo-gpu");
  CHECK(h.effects.Take() == Log{"start solo"});
}

TEST_CASE("budget: group rules cannot evict a protected model either",
          "[unit][scheduler][budget]") {
  Config c = ConfigBuilder().Model("a").Model("b").Build();  // the default group swaps them
  c.models["a"].swappable = false;
  MemoryHarness h(c);
  h.RunAndFinish(1, "a");
  h.scheduler.RequestArrived(2, "b");
  CHECK(h.effects.Take() == Log{"reject 2"});
  CHECK_THAT(h.effects.Rejection(2).message(),
             Catch::Contains("group or matrix rules") && Catch::Contains("\"a\""));
}

TEST_CASE("minResidency: a model just started is protected until its residency ends",
          "[unit][scheduler][budget]") {
  Config c = BudgetDuo();
  c.models["duo-cpu"].min_residency = std::chrono::seconds(300);
  MemoryHarness h(c);
  h.Duo();                    // duo-cpu became ready at t=0; now is t=2
  h.scheduler.SetNow(h.now);  // as the Router does before each request
  h.scheduler.RequestArrived(3, "solo");
  CHECK(h.effects.Take() == Log{"reject 3"});
  const Status& why = h.effects.Rejection(3);
  CHECK(why.code() == ErrorCode::kUnavailable);
  CHECK_THAT(why.message(), Catch::Contains("duo-cpu") && Catch::Contains("minResidency: 300 s"));
  CHECK(why.retry_after_seconds() == 298);  // until its residency ends
  CHECK(h.scheduler.Phase("duo-cpu") == ModelPhase::kReady);
  // The Scheduler asks to be ticked when the residency ends.
  REQUIRE(h.scheduler.NextDeadline().has_value());
  CHECK(*h.scheduler.NextDeadline() == SchedulerTime{} + std::chrono::seconds(300));

  h.scheduler.SetNow(SchedulerTime{} + std::chrono::seconds(300));
  h.scheduler.RequestArrived(4, "solo");
  CHECK(h.effects.Take() == Log{"stop duo-cpu", "stop duo-gpu"});
  CHECK(h.effects.StopReasonOf("duo-cpu") == "budget");
}

TEST_CASE("minResidency: a waiting load goes on once the residency ends (onProtected: wait)",
          "[unit][scheduler][budget]") {
  Config c = ConfigBuilder().Model("a").Model("b").Build();  // the default group swaps them
  c.models["a"].min_residency = std::chrono::seconds(60);
  c.memory.wait_for_protected = true;
  MemoryHarness h(c);
  h.RunAndFinish(1, "a");
  h.scheduler.RequestArrived(2, "b");
  CHECK(h.effects.Take().empty());
  CHECK(h.scheduler.Queued("b") == 1);
  h.scheduler.Tick(SchedulerTime{} + std::chrono::seconds(59));
  CHECK(h.effects.Take().empty());
  h.scheduler.Tick(SchedulerTime{} + std::chrono::seconds(60));
  CHECK(h.effects.Take() == Log{"stop a"});
  CHECK(h.effects.StopReasonOf("a") == "group");
  h.scheduler.StopFinished("a");
  CHECK(h.effects.Take() == Log{"start b"});
}

TEST_CASE(
    "minResidency: a request queued behind the start is refused once it is ready; ttl "
    "still stops it",
    "[unit][scheduler][budget]") {
  Config c = ConfigBuilder().Model("a", "", 10, /*ttl_seconds=*/30).Model("b").Build();
  c.models["a"].min_residency = std::chrono::seconds(600);
  MemoryHarness h(c);
  h.scheduler.RequestArrived(1, "a");
  CHECK(h.effects.Take() == Log{"start a"});
  h.scheduler.RequestArrived(2, "b");  // while a starts: queued behind a's batch
  CHECK(h.effects.Take().empty());
  h.scheduler.StartFinished("a", Status::Ok(), h.now);
  CHECK(h.effects.Take() == Log{"admit 1", "reject 2"});
  CHECK_THAT(h.effects.Rejection(2).message(), Catch::Contains("minResidency: 600 s, 600 s left"));
  CHECK(h.effects.Rejection(2).retry_after_seconds() == 600);
  h.scheduler.RequestFinished(1, h.now);
  h.scheduler.Tick(h.now + std::chrono::seconds(30));  // its ttl is shorter than its residency
  CHECK(h.effects.Take() == Log{"stop a"});
  CHECK(h.effects.StopReasonOf("a") == "ttl");
}

TEST_CASE("budget: a model larger than the budget is refused at once",
          "[unit][scheduler][budget]") {
  Config c = BudgetDuo();
  c.models["solo"].memory.vram[0] = 6 * kGiB;
  MemoryHarness h(c);
  h.scheduler.RequestArrived(1, "solo");
  CHECK(h.effects.Take() == Log{"reject 1"});
  CHECK_THAT(h.effects.Rejection(1).message(),
             Catch::Contains("more than the memory budget") && Catch::Contains("gpu0 4.0 GiB"));
  CHECK(h.effects.Rejection(1).retry_after_seconds() == 0);
}

TEST_CASE("budget: a larger measured footprint evicts the least recently used others",
          "[unit][scheduler][budget]") {
  MemoryHarness h(BudgetDuo());
  h.Duo();
  h.Run(3, "small");                                           // in flight: the most recently used
  h.scheduler.SetFootprint("small", Footprint{5 * kGiB, {}});  // 10 + 1 + 5 > 14
  CHECK(h.effects.Take() == Log{"stop duo-cpu"});
  CHECK(h.effects.StopReasonOf("duo-cpu") == "budget");
  CHECK(h.scheduler.Cost("small").ram == 5 * kGiB);  // larger than its declared 2 GiB
  h.scheduler.SetFootprint("duo-gpu", Footprint{512u << 20, {}});
  CHECK(h.scheduler.Cost("duo-gpu").ram == 1 * kGiB);  // smaller than declared: declared wins
}

TEST_CASE("property: the running models never exceed the budget; protected ones never make room",
          "[unit][scheduler][budget]") {
  Config c = BudgetDuo();
  c.models["duo-gpu"].swappable = false;
  c.models["small"].min_residency = std::chrono::seconds(5);
  const std::vector<std::string> models = {"duo-cpu", "duo-gpu", "small", "solo"};
  std::mt19937 rng(1205);
  for (int round = 0; round < 200; ++round) {
    testing::FakeEffects effects;
    Scheduler s(c, &effects);
    SchedulerTime now{};
    std::vector<RequestId> in_flight;
    std::vector<std::string> starting, stopping;
    RequestId next = 1;
    SchedulerTime small_ready{};
    for (int step = 0; step < 60; ++step) {
      switch (rng() % 4) {
        case 0:
          s.RequestArrived(next++, models[rng() % models.size()]);
          break;
        case 1:
          if (!in_flight.empty()) {
            size_t i = rng() % in_flight.size();
            s.RequestFinished(in_flight[i], now);
            in_flight.erase(in_flight.begin() + static_cast<std::ptrdiff_t>(i));
          }
          break;
        case 2:
          if (!stopping.empty()) {
            std::string m = stopping.front();
            stopping.erase(stopping.begin());
            s.StopFinished(m);
          }
          break;
        case 3:
          if (!starting.empty()) {
            std::string m = starting.front();
            starting.erase(starting.begin());
            s.StartFinished(m, Status::Ok(), now);
            if (m == "small") small_ready = now;
          }
          break;
      }
      now += std::chrono::seconds(1);
      s.Tick(now);
      for (const std::string& e : effects.Take()) {
        if (e.rfind("start ", 0) == 0) starting.push_back(e.substr(6));
        if (e.rfind("stop ", 0) == 0) {
          const std::string m = e.substr(5);
          stopping.push_back(m);
          if (m == "duo-gpu") CHECK(effects.StopReasonOf(m) == "ttl");
          // Within its residency, small stops only when it is only starting (no ttl here).
          if (m == "small" && effects.StopReasonOf(m) != "ttl") {
            CHECK(now - small_ready >= std::chrono::seconds(5));
          }
        }
        if (e.rfind("admit ", 0) == 0) in_flight.push_back(std::stoull(e.substr(6)));
      }
      Footprint total;
      for (const std::string& m : models) {
        if (s.Phase(m) != ModelPhase::kStopped) total += s.Cost(m);
      }
      REQUIRE_FALSE(ExceedsBudget(c.memory.budget, total));
    }
  }
}

}  // namespace
}  // namespace swapd
