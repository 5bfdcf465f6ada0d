// The Scheduler with the matrix router (evictions chosen per load, issued in parallel, each load
// explained once) and with FIFO priorities (a higher priority overtakes waiting batches only).
#include <catch2/catch.hpp>

#include "backends/scheduler.h"
#include "tests/backends/scheduler_fakes.h"

namespace swapd {
namespace {

using testing::ConfigBuilder;
using testing::FakeEffects;
using testing::Log;

using testing::kOk;

// standard: "(g | q) & v"; big alone (cost 10); x in no set.
Config MatrixDay() {
  Config c = ConfigBuilder().Model("g").Model("q").Model("v").Model("big").Model("x").Build();
  auto leaf = [](std::string m) {
    MatrixExpr e;
    e.model = std::move(m);
    return e;
  };
  MatrixExpr choice{MatrixExpr::Kind::kAny, "", {leaf("g"), leaf("q")}};
  MatrixExpr standard{MatrixExpr::Kind::kAll, "", {choice, leaf("v")}};
  MatrixConfig m;
  m.sets = {MatrixSet{"standard", "(g | q) & v", standard}, MatrixSet{"full", "big", leaf("big")}};
  m.evict_costs["big"] = 10;
  c.matrix = m;
  return c;
}

using testing::SwapHarness;

TEST_CASE("matrix: models of one set run together; a swap inside it stops one",
          "[unit][scheduler][matrix]") {
  SwapHarness h(MatrixDay());
  h.RunAndFinish(1, "g");
  h.RunAndFinish(2, "v");
  CHECK(h.scheduler.Phase("g") == ModelPhase::kReady);
  CHECK(h.scheduler.Phase("v") == ModelPhase::kReady);
  CHECK(h.effects.explained_.back() ==
        "matrix: model=v set=standard dsl=\"(g | q) & v\" evict=[] cost=0 (the only choice)");

  h.scheduler.RequestArrived(3, "q");
  CHECK(h.effects.Take() == Log{"stop g"});
  CHECK(h.effects.explained_.back() ==
        "matrix: model=q set=standard dsl=\"(g | q) & v\" evict=[g] cost=1 (the only choice)");
  h.scheduler.StopFinished("g");
  CHECK(h.effects.Take() == Log{"start q"});
  h.scheduler.StartFinished("q", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 3"});
  CHECK(h.scheduler.Phase("v") == ModelPhase::kReady);
}

TEST_CASE("matrix: evictions are issued together and the start waits for all of them",
          "[unit][scheduler][matrix]") {
  SwapHarness h(MatrixDay());
  h.RunAndFinish(1, "g");
  h.RunAndFinish(2, "v");
  const size_t explained = h.effects.explained_.size();
  h.scheduler.RequestArrived(3, "big");
  CHECK(h.effects.Take() == Log{"stop g", "stop v"});  // both at once, not one after the other
  h.scheduler.StopFinished("v");
  CHECK(h.effects.Take().empty());
  h.scheduler.StopFinished("g");
  CHECK(h.effects.Take() == Log{"start big"});
  // Explained once for the load, however many times the queue was walked.
  CHECK(h.effects.explained_.size() == explained + 1);
  h.scheduler.StartFinished("big", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 3"});
}

TEST_CASE(
    "matrix: a busy model is stopped only once its requests finish; a model in no set "
    "runs alone",
    "[unit][scheduler][matrix]") {
  SwapHarness h(MatrixDay());
  h.RunAndFinish(1, "g");
  h.scheduler.RequestArrived(2, "v");
  h.scheduler.StartFinished("v", kOk, h.now);
  CHECK(h.effects.Take() == Log{"start v", "admit 2"});
  h.scheduler.RequestArrived(3, "x");
  CHECK(h.effects.Take() == Log{"stop g"});  // v still serves request 2
  CHECK(h.effects.explained_.back() ==
        "matrix: model=x is in no set, runs alone: evict=[g, v] cost=2");
  h.scheduler.StopFinished("g");
  CHECK(h.effects.Take().empty());
  h.scheduler.RequestFinished(2, h.now);
  CHECK(h.effects.Take() == Log{"stop v"});
  h.scheduler.StopFinished("v");
  CHECK(h.effects.Take() == Log{"start x"});
}

TEST_CASE("matrix: a ready model serves at once beside a compatible one",
          "[unit][scheduler][matrix]") {
  SwapHarness h(MatrixDay());
  h.RunAndFinish(1, "q");
  h.RunAndFinish(2, "v");
  h.scheduler.RequestArrived(3, "q");
  CHECK(h.effects.Take() == Log{"admit 3"});
}

TEST_CASE("fifo priority: a higher priority overtakes batches that wait, not one that loads",
          "[unit][scheduler]") {
  Config c = ConfigBuilder().Model("a").Model("b").Model("c").Model("vip").Build();
  c.models.at("vip").priority = 10;
  SwapHarness h(c);
  h.scheduler.RequestArrived(1, "a");
  CHECK(h.effects.Take() == Log{"start a"});
  h.scheduler.RequestArrived(2, "b");
  h.scheduler.RequestArrived(3, "c");
  h.scheduler.RequestArrived(4, "vip");
  CHECK(h.effects.Take().empty());
  h.scheduler.StartFinished("a", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 1"});
  h.scheduler.RequestFinished(1, h.now);
  CHECK(h.effects.Take() == Log{"stop a"});
  h.scheduler.StopFinished("a");
  CHECK(h.effects.Take() == Log{"start vip"});  // ahead of b and c, which came first
  h.scheduler.StartFinished("vip", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 4"});
  h.scheduler.RequestFinished(4, h.now);
  CHECK(h.effects.Take() == Log{"stop vip"});
  h.scheduler.StopFinished("vip");
  CHECK(h.effects.Take() == Log{"start b"});
}

}  // namespace
}  // namespace swapd
