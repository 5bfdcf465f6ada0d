// Unit tests of overlapped swaps (memory.overlapSwaps): a model that a swap group makes another
// stop for starts while that one is still stopping, but only when the budgets show that both fit
// at once; otherwise (no budget, an unknown footprint, memory no budget covers, one endpoint, a
// stop not issued yet, the switch off) its start waits for the stop to finish.
#include <catch2/catch.hpp>

#include "backends/scheduler.h"
#include "tests/backends/scheduler_fakes.h"
#include "tests/support/sizes.h"

namespace swapd {
namespace {

using testing::ConfigBuilder;
using testing::kGiB;
using testing::Log;

// `a` and `b` swap each other (one swap group), 3 and 4 GiB declared, under a 10 GiB RAM budget.
Config Pair() {
  Config c = ConfigBuilder().Model("a", "pair").Model("b", "pair").Build();
  c.groups["pair"].swap = true;
  c.memory.budget.ram = 10 * kGiB;
  c.models["a"].memory.ram = 3 * kGiB;
  c.models["b"].memory.ram = 4 * kGiB;
  return c;
}

// `a` ready and idle, then a request for `b`: what the Scheduler did at once.
Log SwapToB(testing::SwapHarness& h) {
  h.RunAndFinish(1, "a");
  REQUIRE(h.scheduler.Phase("a") == ModelPhase::kReady);
  h.scheduler.RequestArrived(2, "b");
  return h.effects.Take();
}

TEST_CASE("overlap: the incoming model starts while the outgoing one stops, and serves",
          "[unit][scheduler][budget][overlap]") {
  testing::SwapHarness h(Pair());
  CHECK(SwapToB(h) == Log{"stop a", "start b"});
  CHECK(h.effects.StopReasonOf("a") == "group");
  CHECK(h.scheduler.Phase("a") == ModelPhase::kStopping);
  // b turns ready before a's stop finished: its request is admitted all the same.
  h.scheduler.StartFinished("b", Status::Ok(), h.now);
  CHECK(h.effects.Take() == Log{"admit 2"});
  h.scheduler.StopFinished("a");
  CHECK(h.effects.Take().empty());
  CHECK(h.scheduler.Phase("a") == ModelPhase::kStopped);
  CHECK(h.scheduler.Phase("b") == ModelPhase::kReady);
  // And back: a request for a again overlaps the other way.
  h.scheduler.RequestFinished(2, h.now);
  h.scheduler.RequestArrived(3, "a");
  CHECK(h.effects.Take() == Log{"stop b", "start a"});
}

TEST_CASE("overlap: the start waits for the stop when the switch is off",
          "[unit][scheduler][budget][overlap]") {
  Config c = Pair();
  c.memory.overlap_swaps = false;
  testing::SwapHarness h(c);
  CHECK(SwapToB(h) == Log{"stop a"});
  h.scheduler.StopFinished("a");
  CHECK(h.effects.Take() == Log{"start b"});
}

TEST_CASE("overlap: the start waits when both do not fit at once",
          "[unit][scheduler][budget][overlap]") {
  Config c = Pair();
  c.models["b"].memory.ram = 8 * kGiB;  // 3 + 8 > 10
  testing::SwapHarness h(c);
  CHECK(SwapToB(h) == Log{"stop a"});
  h.scheduler.StopFinished("a");
  CHECK(h.effects.Take() == Log{"start b"});
}

TEST_CASE("overlap: the start waits without a budget", "[unit][scheduler][overlap]") {
  Config c = Pair();
  c.memory.budget = {};
  testing::SwapHarness h(c);
  CHECK(SwapToB(h) == Log{"stop a"});
}

TEST_CASE("overlap: the start waits while a footprint is unknown; a measurement makes it known",
          "[unit][scheduler][budget][overlap]") {
  Config c = Pair();
  c.models["a"]
      .memory = {};  // never declared, never measured: it counts as 0, which proves nothing
  {
    testing::SwapHarness h(c);
    CHECK(SwapToB(h) == Log{"stop a"});
  }
  testing::SwapHarness h(c);
  h.scheduler.SetFootprint("a", Footprint{2 * kGiB, {}});
  CHECK(SwapToB(h) == Log{"stop a", "start b"});
}

TEST_CASE("overlap: the start waits when a model uses memory no budget covers",
          "[unit][scheduler][budget][overlap]") {
  Config c = Pair();
  SECTION("VRAM of a GPU without a budget") {
    testing::SwapHarness h(c);
    h.scheduler.SetFootprint("a", Footprint{3 * kGiB, {{0, 2 * kGiB}}});
    CHECK(SwapToB(h) == Log{"stop a"});
  }
  SECTION("RAM without a RAM budget") {
    c.memory.budget.ram.reset();
    c.memory.budget.vram[0] = 8 * kGiB;
    testing::SwapHarness h(c);
    CHECK(SwapToB(h) == Log{"stop a"});
  }
  SECTION("a budgeted GPU where both fit") {
    c.memory.budget.vram[0] = 8 * kGiB;
    c.models["a"].memory.vram[0] = 3 * kGiB;
    c.models["b"].memory.vram[0] = 4 * kGiB;
    testing::SwapHarness h(c);
    CHECK(SwapToB(h) == Log{"stop a", "start b"});
  }
  SECTION("a budgeted GPU where both do not fit") {
    c.memory.budget.vram[0] = 6 * kGiB;
    c.models["a"].memory.vram[0] = 3 * kGiB;
    c.models["b"].memory.vram[0] = 4 * kGiB;
    testing::SwapHarness h(c);
    CHECK(SwapToB(h) == Log{"stop a"});
  }
}

TEST_CASE("overlap: the start waits when both models answer on one endpoint",
          "[unit][scheduler][budget][overlap]") {
  Config c = Pair();
  c.models["b"].proxy = c.models["a"].proxy;  // one fixed port: b could not bind it
  testing::SwapHarness h(c);
  CHECK(SwapToB(h) == Log{"stop a"});
  h.scheduler.StopFinished("a");
  CHECK(h.effects.Take() == Log{"start b"});
}

TEST_CASE("overlap: a model with a request in flight is not stopped, and nothing starts beside it",
          "[unit][scheduler][budget][overlap]") {
  testing::SwapHarness h(Pair());
  h.Run(1, "a");  // its request stays in flight
  h.scheduler.RequestArrived(2, "b");
  CHECK(h.effects.Take().empty());
  h.scheduler.RequestFinished(1, h.now);
  CHECK(h.effects.Take() == Log{"stop a", "start b"});
}

}  // namespace
}  // namespace swapd
