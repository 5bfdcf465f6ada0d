// Unit tests of Scheduler::Reconfigure (a reload): unchanged models keep running, changed ones
// restart only after their in-flight requests, removed ones drain and stop, new limits and group
// rules apply. Fake Effects, no threads, no processes.
#include <catch2/catch.hpp>

#include "backends/scheduler.h"
#include "tests/backends/scheduler_fakes.h"

namespace swapd {
namespace {

using testing::ConfigBuilder;
using testing::FakeEffects;
using testing::Log;

using testing::kOk;

// A duo that runs together.
Config Duo() {
  return ConfigBuilder()
      .Group("duo", /*swap=*/false, /*exclusive=*/true, /*persistent=*/false)
      .Model("a", "duo")
      .Model("b", "duo")
      .Build();
}

using testing::ServingHarness;

TEST_CASE("reload: an unchanged model keeps running and serving", "[unit][scheduler][reload]") {
  ServingHarness h(Duo());
  h.Serve(1, "a");
  h.Serve(2, "b");
  h.scheduler.Reconfigure(Duo(), {"b"});
  CHECK(h.effects.Take().empty());  // b has a request in flight: not stopped yet
  h.scheduler.RequestArrived(3, "a");
  CHECK(h.effects.Take() == Log{"admit 3"});
  CHECK(h.scheduler.Phase("a") == ModelPhase::kReady);
}

TEST_CASE("reload: a changed model restarts only after its in-flight requests finish",
          "[unit][scheduler][reload]") {
  ServingHarness h(Duo());
  h.Serve(1, "b");
  h.scheduler.Reconfigure(Duo(), {"b"});
  CHECK(h.effects.Take().empty());
  // A new request does not reach the old process: it waits for the restart.
  h.scheduler.RequestArrived(2, "b");
  CHECK(h.effects.Take().empty());
  CHECK(h.scheduler.Queued("b") == 1);
  h.scheduler.RequestFinished(1, h.now);
  CHECK(h.effects.Take() == Log{"stop b"});
  h.scheduler.StopFinished("b");
  CHECK(h.effects.Take() == Log{"start b"});
  h.scheduler.StartFinished("b", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 2"});
}

TEST_CASE("reload: a changed idle model stops at once; nothing restarts it until asked",
          "[unit][scheduler][reload]") {
  ServingHarness h(Duo());
  h.Serve(1, "a");
  h.scheduler.RequestFinished(1, h.now);
  h.scheduler.Reconfigure(Duo(), {"a"});
  CHECK(h.effects.Take() == Log{"stop a"});
  CHECK(h.effects.StopReasonOf("a") == "reload");
  h.scheduler.StopFinished("a");
  CHECK(h.effects.Take().empty());
  CHECK(h.scheduler.Phase("a") == ModelPhase::kStopped);
  h.Serve(2, "a");
}

TEST_CASE("reload: a changed model that is starting is cancelled and its waiters restart it",
          "[unit][scheduler][reload]") {
  ServingHarness h(Duo());
  h.scheduler.RequestArrived(1, "a");
  CHECK(h.effects.Take() == Log{"start a"});
  h.scheduler.Reconfigure(Duo(), {"a"});
  CHECK(h.effects.Take() == Log{"stop a"});
  h.scheduler.StartFinished("a", kOk, h.now);  // the old start completes; the stop wins
  h.scheduler.StopFinished("a");
  CHECK(h.effects.Take() == Log{"start a"});
  h.scheduler.StartFinished("a", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 1"});
}

TEST_CASE("reload: a removed model drains, stops, and is not found afterwards",
          "[unit][scheduler][reload]") {
  ServingHarness h(Duo());
  h.Serve(1, "a");
  h.Serve(2, "b");
  Config only_a = ConfigBuilder().Group("duo", false, true, false).Model("a", "duo").Build();
  h.scheduler.Reconfigure(only_a, {});
  CHECK(h.effects.Take().empty());  // b still has request 2 in flight
  h.scheduler.RequestArrived(3, "b");
  CHECK(h.effects.Take() == Log{"reject 3"});
  CHECK(h.effects.Rejection(3).code() == ErrorCode::kNotFound);
  h.scheduler.RequestFinished(2, h.now);
  CHECK(h.effects.Take() == Log{"stop b"});
  h.scheduler.StopFinished("b");
  CHECK(h.scheduler.Phase("b") == ModelPhase::kStopped);
  CHECK(h.scheduler.Phase("a") == ModelPhase::kReady);
}

TEST_CASE("reload: queued requests for a removed model are rejected", "[unit][scheduler][reload]") {
  ServingHarness h(ConfigBuilder().Model("a").Model("b").Build());
  h.Serve(1, "a");
  h.scheduler.RequestArrived(2, "b");  // waits for a's request to finish
  CHECK(h.effects.Take().empty());
  h.scheduler.Reconfigure(ConfigBuilder().Model("a").Build(), {});
  CHECK(h.effects.Take() == Log{"reject 2"});
  CHECK(h.effects.Rejection(2).code() == ErrorCode::kNotFound);
  h.scheduler.RequestFinished(1, h.now);
  CHECK(h.effects.Take().empty());  // nothing wants a stopped any more
}

TEST_CASE("reload: an added model is routable and new group rules apply",
          "[unit][scheduler][reload]") {
  ServingHarness h(ConfigBuilder().Model("a").Build());
  h.Serve(1, "a");
  h.scheduler.RequestFinished(1, h.now);
  // c joins; a and c now share a non-exclusive group that lets them run together.
  Config next = ConfigBuilder()
                    .Group("pair", /*swap=*/false, /*exclusive=*/false, false)
                    .Model("a", "pair")
                    .Model("c", "pair")
                    .Build();
  h.scheduler.Reconfigure(next, {});
  CHECK(h.effects.Take().empty());
  h.Serve(2, "c");
  CHECK(h.scheduler.Phase("a") == ModelPhase::kReady);
}

TEST_CASE("reload: a new concurrency limit applies at once", "[unit][scheduler][reload]") {
  ServingHarness h(ConfigBuilder().Model("a", "", 10).Build());
  h.Serve(1, "a");
  h.scheduler.Reconfigure(ConfigBuilder().Model("a", "", 1).Build(), {});
  h.scheduler.RequestArrived(2, "a");
  CHECK(h.effects.Take() == Log{"reject 2"});
  CHECK(h.effects.Rejection(2).code() == ErrorCode::kTooManyRequests);
}

TEST_CASE("reload: a removed model that comes back serves again", "[unit][scheduler][reload]") {
  ServingHarness h(ConfigBuilder().Model("a").Model("b").Build());
  h.scheduler.Reconfigure(ConfigBuilder().Model("a").Build(), {});
  h.scheduler.Preload({"b"});
  CHECK(h.effects.Take().empty());
  h.scheduler.Reconfigure(ConfigBuilder().Model("a").Model("b").Build(), {});
  h.Serve(1, "b");
}

}  // namespace
}  // namespace swapd
