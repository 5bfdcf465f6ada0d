// Unit tests of the Scheduler's group rules, starts, failures, exits, TTL, unload, preload and
// shutdown: a fake Effects and a fake clock, no threads, no processes.
#include "backends/scheduler.h"

#include <catch2/catch.hpp>

#include "backends/scheduler_policy.h"
#include "tests/backends/scheduler_fakes.h"

namespace swapd {
namespace {

using std::chrono::seconds;
using testing::ConfigBuilder;
using testing::FakeEffects;
using testing::Log;

using testing::kOk;

// The laptop of DESIGN.md: a duo (swap: false, exclusive: true), two ungrouped models, a
// persistent embedding group and a non-exclusive side group.
Config DayConfig() {
  return ConfigBuilder()
      .Group("duo", /*swap=*/false, /*exclusive=*/true, /*persistent=*/false)
      .Group("embed", true, true, /*persistent=*/true)
      .Group("side", true, /*exclusive=*/false, false)
      .Model("coder", "duo")
      .Model("helper", "duo")
      .Model("a")
      .Model("b")
      .Model("emb", "embed")
      .Model("tts", "side")
      .Build();
}

using testing::SwapHarness;

TEST_CASE("conflicts follow DESIGN.md group semantics", "[unit][scheduler]") {
  auto c = ComputeConflicts(DayConfig());
  using S = std::set<std::string>;
  // Ungrouped: default group swaps and is exclusive, persistent groups survive.
  CHECK(c["a"] == S{"b", "coder", "helper", "tts"});
  // The duo's members run together; other non-persistent groups stop.
  CHECK(c["coder"] == S{"a", "b", "tts"});
  // A persistent group is itself exclusive towards the others.
  CHECK(c["emb"] == S{"a", "b", "coder", "helper", "tts"});
  // A non-exclusive group only swaps inside itself.
  CHECK(c["tts"].empty());
}

TEST_CASE("each conflict has its reason in the config's words", "[unit][scheduler]") {
  const Config config = DayConfig();
  CHECK(ConflictReason(config, "a", "b") == "both are in no group, and ungrouped models swap");
  CHECK(ConflictReason(config, "a", "tts") ==
        "\"a\" is in no group, and ungrouped models are exclusive: loading one stops the other "
        "groups");
  CHECK(ConflictReason(config, "coder", "a") ==
        "group \"duo\" is exclusive: loading a member stops the other groups");
  CHECK(ConflictReason(config, "emb", "coder") ==
        "group \"embed\" is exclusive: loading a member stops the other groups");
  // No conflict, no reason: duo members, a persistent group, a non-exclusive group's outsiders.
  CHECK(ConflictReason(config, "coder", "helper").empty());
  CHECK(ConflictReason(config, "a", "emb").empty());
  CHECK(ConflictReason(config, "tts", "a").empty());
  CHECK(ConflictReason(config, "a", "gone").empty());
  // Every conflict ComputeConflicts finds has one.
  for (const auto& [model, stops] : ComputeConflicts(config)) {
    for (const std::string& other : stops)
      CHECK_FALSE(ConflictReason(config, model, other).empty());
  }
}

TEST_CASE("a swap issues its stops first and starts only when they completed",
          "[unit][scheduler]") {
  SwapHarness h(DayConfig());
  h.Run(1, "coder");
  h.Run(2, "helper");
  h.scheduler.RequestFinished(1, h.now);
  h.scheduler.RequestFinished(2, h.now);
  CHECK(h.scheduler.Phase("coder") == ModelPhase::kReady);
  CHECK(h.scheduler.Phase("helper") == ModelPhase::kReady);

  h.scheduler.RequestArrived(3, "a");
  CHECK(h.effects.Take() == Log{"stop coder", "stop helper"});
  CHECK(h.effects.StopReasonOf("coder") == "group");
  h.scheduler.StopFinished("coder");
  CHECK(h.effects.Take().empty());
  h.scheduler.StopFinished("helper");
  CHECK(h.effects.Take() == Log{"start a"});
  h.scheduler.StartFinished("a", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 3"});
}

TEST_CASE("duo members run together; a persistent group survives swaps", "[unit][scheduler]") {
  SwapHarness h(DayConfig());
  h.Run(1, "emb");
  h.Run(2, "coder");
  h.scheduler.RequestArrived(3, "helper");
  CHECK(h.effects.Take() == Log{"start helper"});  // coder keeps running
  h.scheduler.StartFinished("helper", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 3"});
  h.scheduler.RequestFinished(2, h.now);
  h.scheduler.RequestFinished(3, h.now);
  h.Run(4, "a");
  CHECK(h.scheduler.Phase("coder") == ModelPhase::kStopped);
  CHECK(h.scheduler.Phase("helper") == ModelPhase::kStopped);
  CHECK(h.scheduler.Phase("emb") == ModelPhase::kReady);
  CHECK(h.scheduler.Phase("a") == ModelPhase::kReady);
}

TEST_CASE("a non-exclusive group leaves others running, an exclusive one stops it",
          "[unit][scheduler]") {
  SwapHarness h(DayConfig());
  h.Run(1, "a");
  h.scheduler.RequestArrived(2, "tts");
  CHECK(h.effects.Take() == Log{"start tts"});
  h.scheduler.StartFinished("tts", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 2"});
  CHECK(h.scheduler.Phase("a") == ModelPhase::kReady);
  // Asking again for the exclusive "a" stops "tts" once its request finished.
  h.scheduler.RequestArrived(3, "a");
  CHECK(h.effects.Take().empty());
  h.scheduler.RequestFinished(2, h.now);
  CHECK(h.effects.Take() == Log{"stop tts"});
  h.scheduler.StopFinished("tts");
  CHECK(h.effects.Take() == Log{"admit 3"});
}

TEST_CASE("requests for a starting model join its start", "[unit][scheduler]") {
  SwapHarness h(DayConfig());
  h.scheduler.RequestArrived(1, "a");
  h.scheduler.RequestArrived(2, "a");
  CHECK(h.effects.Take() == Log{"start a"});
  CHECK(h.scheduler.Queued("a") == 2);
  h.scheduler.StartFinished("a", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 1", "admit 2"});
  CHECK(h.scheduler.InFlight("a") == 2);
}

TEST_CASE("swaps with disjoint effects run in parallel", "[unit][scheduler]") {
  SwapHarness h(ConfigBuilder()
                    .Group("g1", true, false, false)
                    .Group("g2", true, false, false)
                    .Model("x", "g1")
                    .Model("y", "g2")
                    .Build());
  h.scheduler.RequestArrived(1, "x");
  h.scheduler.RequestArrived(2, "y");
  CHECK(h.effects.Take() == Log{"start x", "start y"});
  h.scheduler.StartFinished("y", kOk, h.now);
  h.scheduler.StartFinished("x", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 2", "admit 1"});
}

TEST_CASE("duo members requested together start in parallel", "[unit][scheduler]") {
  SwapHarness h(DayConfig());
  h.scheduler.RequestArrived(1, "coder");
  h.scheduler.RequestArrived(2, "helper");
  CHECK(h.effects.Take() == Log{"start coder", "start helper"});
}

TEST_CASE("a failed start fails all its waiters; the next request tries again",
          "[unit][scheduler]") {
  SwapHarness h(DayConfig());
  h.scheduler.RequestArrived(1, "a");
  h.scheduler.RequestArrived(2, "a");
  h.effects.Take();
  h.scheduler.StartFinished("a", Status::Error(ErrorCode::kBackendFailed, "exit status 1: oom"),
                            h.now);
  CHECK(h.effects.Take() == Log{"reject 1", "reject 2"});
  for (RequestId id : {1, 2}) {
    CHECK(h.effects.Rejection(id).code() == ErrorCode::kBackendFailed);
    CHECK_THAT(h.effects.Rejection(id).message(), Catch::Contains("exit status 1: oom"));
    CHECK_THAT(h.effects.Rejection(id).message(), Catch::Contains("\"a\""));
  }
  CHECK(h.scheduler.Phase("a") == ModelPhase::kStopped);
  h.scheduler.RequestArrived(3, "a");
  CHECK(h.effects.Take() == Log{"start a"});
  // A message that names the model already is passed through as it is.
  const std::string named = "model \"a\" exited during start-up: exit status 1";
  h.scheduler.StartFinished("a", Status::Error(ErrorCode::kBackendFailed, named), h.now);
  CHECK(h.effects.Rejection(3).message() == named);
}

TEST_CASE("a backend that exits while ready is stopped and started again on demand",
          "[unit][scheduler]") {
  SwapHarness h(DayConfig());
  h.Run(1, "a");
  h.scheduler.BackendExited("a");
  CHECK(h.scheduler.Phase("a") == ModelPhase::kStopped);
  CHECK(h.scheduler.InFlight("a") == 0);  // request 1 is the proxy's problem now
  h.scheduler.RequestFinished(1, h.now);  // ignored
  h.scheduler.RequestArrived(2, "a");
  CHECK(h.effects.Take() == Log{"start a"});
  h.scheduler.BackendExited("a");  // while starting: the start reports it, not this
  CHECK(h.scheduler.Phase("a") == ModelPhase::kStarting);
}

TEST_CASE("TTL stops a model idle for its ttl, counted from ready or last finish",
          "[unit][scheduler]") {
  SwapHarness h(ConfigBuilder().Model("a", "", 10, /*ttl=*/5).Model("b").Build());
  h.scheduler.RequestArrived(1, "a");
  h.effects.Take();
  CHECK_FALSE(h.scheduler.NextDeadline());  // starting
  h.scheduler.StartFinished("a", kOk, h.now);
  h.effects.Take();
  CHECK_FALSE(h.scheduler.NextDeadline());  // request in flight
  h.now += seconds(30);
  h.scheduler.Tick(h.now);
  CHECK(h.effects.Take().empty());
  h.scheduler.RequestFinished(1, h.now);
  REQUIRE(h.scheduler.NextDeadline() == h.now + seconds(5));
  h.scheduler.Tick(h.now + seconds(4));
  CHECK(h.effects.Take().empty());
  h.scheduler.Tick(h.now + seconds(5));
  CHECK(h.effects.Take() == Log{"stop a"});
  CHECK(h.effects.StopReasonOf("a") == "ttl");
  CHECK_FALSE(h.scheduler.NextDeadline());

  // Deadline from the moment it became ready when no request ever finishes there (preload).
  h.scheduler.StopFinished("a");
  h.scheduler.Preload({"a"});
  h.scheduler.StartFinished("a", kOk, h.now);
  CHECK(h.scheduler.NextDeadline() == h.now + seconds(5));
  // ttl 0 never expires.
  h.Run(2, "b");
  h.scheduler.RequestFinished(2, h.now);
  CHECK_FALSE(h.scheduler.NextDeadline());
}

TEST_CASE("a residency's ttl (Ollama's keep_alive) replaces the configured one until it stops",
          "[unit][scheduler]") {
  SwapHarness h(ConfigBuilder().Model("a", "", 10, /*ttl=*/5).Build());
  h.scheduler.SetResidencyTtl("a", seconds(60));  // not running: ignored
  h.scheduler.RequestArrived(1, "a");
  h.effects.Take();
  h.scheduler.StartFinished("a", kOk, h.now);
  h.effects.Take();  // request 1 admitted
  h.scheduler.SetResidencyTtl("a", seconds(60));
  h.scheduler.RequestFinished(1, h.now);
  REQUIRE(h.scheduler.NextDeadline() == h.now + seconds(60));
  h.scheduler.Tick(h.now + seconds(5));
  CHECK(h.effects.Take().empty());                // the configured 5 s no longer apply
  h.scheduler.SetResidencyTtl("a", seconds(-1));  // keep it: no deadline at all
  CHECK_FALSE(h.scheduler.NextDeadline());
  h.scheduler.Tick(h.now + seconds(3600));
  CHECK(h.effects.Take().empty());
  h.scheduler.Unload("a");
  CHECK(h.effects.Take() == Log{"stop a"});
  h.scheduler.StopFinished("a");
  // The next residency has the configured ttl again.
  h.scheduler.RequestArrived(2, "a");
  h.effects.Take();
  h.scheduler.StartFinished("a", kOk, h.now);
  h.scheduler.RequestFinished(2, h.now);
  CHECK(h.scheduler.NextDeadline() == h.now + seconds(5));
}

TEST_CASE("unload stops at once; queued requests start the model again afterwards",
          "[unit][scheduler]") {
  SwapHarness h(DayConfig());
  h.Run(1, "a");
  h.scheduler.Unload("a");  // request 1 still in flight
  CHECK(h.effects.Take() == Log{"stop a"});
  CHECK(h.effects.StopReasonOf("a") == "unload");
  h.scheduler.RequestArrived(2, "a");  // arrives during the stop: queued
  CHECK(h.effects.Take().empty());
  h.scheduler.StopFinished("a");
  CHECK(h.scheduler.StopsCompleted("a") == 1);
  CHECK(h.effects.Take() == Log{"start a"});
  h.scheduler.StartFinished("a", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 2"});
  h.scheduler.RequestFinished(1, h.now);  // detached by the stop: does not count
  CHECK(h.scheduler.InFlight("a") == 1);
}

TEST_CASE("unload of a starting model cancels the start and keeps its waiters",
          "[unit][scheduler]") {
  SwapHarness h(DayConfig());
  h.scheduler.RequestArrived(1, "a");
  CHECK(h.effects.Take() == Log{"start a"});
  h.scheduler.Unload("");
  CHECK(h.effects.Take() == Log{"stop a"});
  // The cancelled start reports failure; its waiter is not rejected.
  h.scheduler.StartFinished("a", Status::Error(ErrorCode::kBackendFailed, "stopped"), h.now);
  CHECK(h.effects.Take().empty());
  CHECK(h.scheduler.Phase("a") == ModelPhase::kStopping);
  h.scheduler.StopFinished("a");
  CHECK(h.effects.Take() == Log{"start a"});
  h.scheduler.StartFinished("a", kOk, h.now);
  CHECK(h.effects.Take() == Log{"admit 1"});
}

TEST_CASE("unload drops a preload that has not happened yet", "[unit][scheduler]") {
  SwapHarness h(DayConfig());
  h.scheduler.Preload({"a"});
  CHECK(h.effects.Take() == Log{"start a"});
  h.scheduler.Unload("a");
  CHECK(h.effects.Take() == Log{"stop a"});
  h.scheduler.StartFinished("a", Status::Error(ErrorCode::kBackendFailed, "stopped"), h.now);
  h.scheduler.StopFinished("a");
  CHECK(h.effects.Take().empty());
  CHECK(h.scheduler.AllStopped());
}

TEST_CASE("unload all stops every running model", "[unit][scheduler]") {
  SwapHarness h(DayConfig());
  h.Run(1, "emb");
  h.Run(2, "coder");
  h.scheduler.Unload("");
  CHECK(h.effects.Take() == Log{"stop coder", "stop emb"});
  h.scheduler.StopFinished("coder");
  h.scheduler.StopFinished("emb");
  CHECK(h.scheduler.AllStopped());
}

TEST_CASE("preload honours groups: the later of two conflicting models wins", "[unit][scheduler]") {
  SwapHarness h(DayConfig());
  h.scheduler.Preload({"a", "emb", "b"});
  CHECK(h.effects.Take() == Log{"start a"});  // emb conflicts with a: it waits
  h.scheduler.StartFinished("a", kOk, h.now);
  CHECK(h.effects.Take() == Log{"stop a"});  // for emb (exclusive)
  h.scheduler.StopFinished("a");
  CHECK(h.effects.Take() == Log{"start emb"});
  h.scheduler.StartFinished("emb", kOk, h.now);
  CHECK(h.effects.Take() == Log{"start b"});  // emb is persistent: b runs beside it
  h.scheduler.StartFinished("b", kOk, h.now);
  CHECK(h.scheduler.Phase("emb") == ModelPhase::kReady);
  CHECK(h.scheduler.Phase("b") == ModelPhase::kReady);
  CHECK(h.scheduler.Phase("a") == ModelPhase::kStopped);
}

TEST_CASE("shutdown fails queued requests, stops everything, admits nothing", "[unit][scheduler]") {
  SwapHarness h(DayConfig());
  h.Run(1, "emb");                     // persistent: keeps running beside "a"
  h.scheduler.RequestArrived(2, "a");  // starting
  h.scheduler.RequestArrived(3, "b");  // waits for "a"
  CHECK(h.effects.Take() == Log{"start a"});
  h.scheduler.Shutdown();
  CHECK(h.effects.Take() == Log{"reject 2", "reject 3", "stop a", "stop emb"});
  CHECK(h.effects.StopReasonOf("emb") == "shutdown");
  CHECK(h.effects.Rejection(2).code() == ErrorCode::kUnavailable);
  CHECK(h.effects.Rejection(3).code() == ErrorCode::kUnavailable);
  h.scheduler.RequestArrived(4, "emb");
  CHECK(h.effects.Take() == Log{"reject 4"});
  CHECK(h.effects.Rejection(4).code() == ErrorCode::kUnavailable);
  h.scheduler.Preload({"b"});
  CHECK(h.effects.Take().empty());
  CHECK_FALSE(h.scheduler.AllStopped());
  h.scheduler.StartFinished("a", Status::Error(ErrorCode::kBackendFailed, "stopped"), h.now);
  h.scheduler.StopFinished("a");
  h.scheduler.StopFinished("emb");
  CHECK(h.scheduler.AllStopped());
  CHECK(h.effects.Take().empty());
}

TEST_CASE("an unknown model is rejected with kNotFound", "[unit][scheduler]") {
  SwapHarness h(DayConfig());
  h.scheduler.RequestArrived(1, "nope");
  CHECK(h.effects.Take() == Log{"reject 1"});
  CHECK(h.effects.Rejection(1).code() == ErrorCode::kNotFound);
}

}  // namespace
}  // namespace swapd
