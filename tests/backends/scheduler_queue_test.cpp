// Unit tests of the Scheduler's queue: in-flight protection, FIFO collation, the starvation
// bound, concurrencyLimit and withdrawn requests. Fake Effects, no threads, no processes.
#include <catch2/catch.hpp>

#include "backends/scheduler.h"
#include "tests/backends/scheduler_fakes.h"

namespace swapd {
namespace {

using testing::ConfigBuilder;
using testing::FakeEffects;
using testing::Log;

using testing::kOk;

// Three ungrouped models (the default group: swap, exclusive).
Config ThreeModels(int limit = 10) {
  return ConfigBuilder().Model("a", "", limit).Model("b", "", limit).Model("c", "", limit).Build();
}

using testing::ServingHarness;

TEST_CASE("a swap waits for requests in flight, then stops before it starts", "[unit][scheduler]") {
  ServingHarness h(ThreeModels());
  h.Serve(1, "a");
  h.scheduler.RequestArrived(2, "a");
  h.effects.Take();
  h.scheduler.RequestArrived(3, "b");
  CHECK(h.effects.Take().empty());  // "a" is busy: nothing is stopped
  CHECK(h.scheduler.Queued("b") == 1);
  h.scheduler.RequestFinished(1, h.now);
  CHECK(h.effects.Take().empty());
  h.scheduler.RequestFinished(2, h.now);
  CHECK(h.effects.Take() == Log{"stop a"});
  h.scheduler.StopFinished("a");
  CHECK(h.effects.Take() == Log{"start b"});
  h.scheduler.StartFinished("b", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 3"});
}

TEST_CASE("QueuePosition: where a model's waiting batch stands", "[unit][scheduler]") {
  ServingHarness h(ThreeModels());
  CHECK(h.scheduler.QueuePosition("a") == 0);
  h.scheduler.RequestArrived(1, "a");  // a starts: its batch waits at the head until ready
  h.scheduler.RequestArrived(2, "b");
  h.scheduler.RequestArrived(3, "c");
  CHECK(h.scheduler.QueuePosition("a") == 1);
  CHECK(h.scheduler.QueuePosition("b") == 2);
  CHECK(h.scheduler.QueuePosition("c") == 3);
  h.scheduler.StartFinished("a", kOk, h.now);  // request 1 admitted: a's batch leaves
  CHECK(h.scheduler.QueuePosition("a") == 0);
  CHECK(h.scheduler.QueuePosition("b") == 1);
  CHECK(h.scheduler.QueuePosition("c") == 2);
}

TEST_CASE("idle conflicts stop at once while busy ones drain", "[unit][scheduler]") {
  ServingHarness h(ConfigBuilder()
                       .Group("duo", /*swap=*/false, /*exclusive=*/true, /*persistent=*/false)
                       .Model("coder", "duo")
                       .Model("helper", "duo")
                       .Model("a")
                       .Build());
  h.Serve(1, "coder");
  h.scheduler.RequestArrived(2, "helper");
  h.scheduler.StartFinished("helper", kOk, h.now);
  h.scheduler.RequestFinished(2, h.now);
  h.effects.Take();
  h.scheduler.RequestArrived(3, "a");
  CHECK(h.effects.Take() == Log{"stop helper"});  // coder still has request 1
  h.scheduler.StopFinished("helper");
  CHECK(h.effects.Take().empty());
  h.scheduler.RequestFinished(1, h.now);
  CHECK(h.effects.Take() == Log{"stop coder"});
  h.scheduler.StopFinished("coder");
  CHECK(h.effects.Take() == Log{"start a"});
}

TEST_CASE("requests for the same model are collated: A B A B is served A A B B",
          "[unit][scheduler]") {
  ServingHarness h(ThreeModels());
  h.Serve(1, "c");  // blocks everything while in flight
  h.scheduler.RequestArrived(2, "a");
  h.scheduler.RequestArrived(3, "b");
  h.scheduler.RequestArrived(4, "a");
  h.scheduler.RequestArrived(5, "b");
  CHECK(h.effects.Take().empty());
  h.scheduler.RequestFinished(1, h.now);
  CHECK(h.effects.Take() == Log{"stop c"});
  h.scheduler.StopFinished("c");
  CHECK(h.effects.Take() == Log{"start a"});
  h.scheduler.StartFinished("a", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 2", "admit 4"});
  h.scheduler.RequestFinished(2, h.now);
  h.scheduler.RequestFinished(4, h.now);
  CHECK(h.effects.Take() == Log{"stop a"});
  h.scheduler.StopFinished("a");
  h.scheduler.StartFinished("b", kOk, h.now);
  CHECK(h.effects.Take() == Log{"start b", "admit 3", "admit 5"});
}

TEST_CASE("steady traffic to a running model cannot starve a queued swap", "[unit][scheduler]") {
  ServingHarness h(ThreeModels());
  h.Serve(1, "a");
  h.scheduler.RequestArrived(2, "b");  // the swap: waits for "a" to drain
  RequestId id = 10;
  for (int i = 0; i < Scheduler::kMaxBypass; ++i) h.scheduler.RequestArrived(id++, "a");
  CHECK(h.scheduler.InFlight("a") == 1 + Scheduler::kMaxBypass);
  h.effects.Take();
  // The next ones queue behind the swap.
  h.scheduler.RequestArrived(100, "a");
  h.scheduler.RequestArrived(101, "a");
  CHECK(h.effects.Take().empty());
  CHECK(h.scheduler.Queued("a") == 2);
  h.scheduler.RequestFinished(1, h.now);
  for (RequestId done = 10; done < id; ++done) h.scheduler.RequestFinished(done, h.now);
  CHECK(h.effects.Take() == Log{"stop a"});
  h.scheduler.StopFinished("a");
  h.scheduler.StartFinished("b", kOk, h.now);
  CHECK(h.effects.Take() == Log{"start b", "admit 2"});
  // Then "a" comes back for the requests that queued behind the swap.
  h.scheduler.RequestFinished(2, h.now);
  h.scheduler.StopFinished("b");
  h.scheduler.StartFinished("a", kOk, h.now);
  CHECK(h.effects.Take() == Log{"stop b", "start a", "admit 100", "admit 101"});
}

TEST_CASE("without a queued swap, the fast path admits without bound", "[unit][scheduler]") {
  ServingHarness h(ThreeModels(/*limit=*/100));
  h.Serve(1, "a");
  for (RequestId id = 2; id < 50; ++id) h.scheduler.RequestArrived(id, "a");
  CHECK(h.scheduler.InFlight("a") == 49);
  CHECK(h.scheduler.Queued("a") == 0);
}

TEST_CASE("concurrencyLimit rejects arrivals beyond it at once with kTooManyRequests",
          "[unit][scheduler]") {
  ServingHarness h(ThreeModels(/*limit=*/2));
  h.Serve(1, "a");
  h.scheduler.RequestArrived(2, "a");
  h.scheduler.RequestArrived(3, "a");
  CHECK(h.effects.Take() == Log{"admit 2", "reject 3"});
  CHECK(h.effects.Rejection(3).code() == ErrorCode::kTooManyRequests);
  CHECK(h.effects.Rejection(3).message() == "model \"a\": concurrency limit 2 reached");
  h.scheduler.RequestFinished(1, h.now);
  h.scheduler.RequestArrived(4, "a");
  CHECK(h.effects.Take() == Log{"admit 4"});
}

TEST_CASE("requests queued for a start do not count against the limit; extra ones wait",
          "[unit][scheduler]") {
  ServingHarness h(ThreeModels(/*limit=*/2));
  for (RequestId id = 1; id <= 3; ++id) h.scheduler.RequestArrived(id, "a");
  CHECK(h.effects.Take() == Log{"start a"});
  h.scheduler.StartFinished("a", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 1", "admit 2"});
  CHECK(h.scheduler.Queued("a") == 1);
  h.scheduler.RequestFinished(1, h.now);
  CHECK(h.effects.Take() == Log{"admit 3"});
}

TEST_CASE("a withdrawn request does not leave the scheduler waiting for it", "[unit][scheduler]") {
  ServingHarness h(ThreeModels());
  h.Serve(1, "a");
  h.scheduler.RequestArrived(2, "b");  // a swap waiting for "a"
  h.scheduler.RequestArrived(3, "c");  // behind it
  CHECK(h.scheduler.RequestWithdrawn(2));
  CHECK_FALSE(h.scheduler.RequestWithdrawn(2));
  CHECK_FALSE(h.scheduler.RequestWithdrawn(1));  // in flight, not queued
  CHECK(h.scheduler.Queued("b") == 0);
  // "c" moves as soon as "a" drains, without waiting for "b".
  h.scheduler.RequestFinished(1, h.now);
  CHECK(h.effects.Take() == Log{"stop a"});
  h.scheduler.StopFinished("a");
  h.scheduler.StartFinished("c", kOk, h.now);
  CHECK(h.effects.Take() == Log{"start c", "admit 3"});
}

TEST_CASE("a withdrawn swap no longer holds its model to the bypass bound", "[unit][scheduler]") {
  ServingHarness h(ThreeModels(/*limit=*/100));
  h.Serve(1, "a");
  h.scheduler.RequestArrived(2, "b");
  CHECK(h.scheduler.RequestWithdrawn(2));
  for (RequestId id = 10; id < 10 + 2 * Scheduler::kMaxBypass; ++id) {
    h.scheduler.RequestArrived(id, "a");
  }
  CHECK(h.scheduler.InFlight("a") == 1 + 2 * Scheduler::kMaxBypass);
  CHECK(h.scheduler.Queued("a") == 0);
  h.effects.Take();
  h.scheduler.RequestFinished(1, h.now);
  CHECK(h.effects.Take().empty());  // nobody waits for "a" to stop
}

TEST_CASE("a withdrawn waiter leaves a started model to run idle", "[unit][scheduler]") {
  ServingHarness h(ThreeModels());
  h.scheduler.RequestArrived(1, "a");
  CHECK(h.effects.Take() == Log{"start a"});
  CHECK(h.scheduler.RequestWithdrawn(1));
  h.scheduler.StartFinished("a", kOk, h.now);
  CHECK(h.effects.Take().empty());
  CHECK(h.scheduler.Phase("a") == ModelPhase::kReady);
  CHECK(h.scheduler.InFlight("a") == 0);
  // An idle model is stopped right away for the next swap.
  h.scheduler.RequestArrived(2, "b");
  CHECK(h.effects.Take() == Log{"stop a"});
}

}  // namespace
}  // namespace swapd
