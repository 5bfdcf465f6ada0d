// Router tests: real threads, scripted in-process Backends (no processes). Every wait is on a
// condition with a generous deadline.
#include "backends/router.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <future>
#include <thread>

#include "tests/backends/scheduler_fakes.h"
#include "tests/backends/scripted_backend.h"
#include "tests/support/wait.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;
using testing::BackendScript;
using testing::ConfigBuilder;
using Clock = std::chrono::steady_clock;

constexpr auto kPatience = 20s;

// Polls `pred` until it holds or kPatience passed.
bool Eventually(const std::function<bool()>& pred) {
  return testing::WaitFor(pred, kPatience, 2ms);
}

ModelSnapshot SnapshotOf(const Router& router, const std::string& id) {
  for (ModelSnapshot& s : router.Snapshot()) {
    if (s.id == id) return s;
  }
  FAIL("no snapshot for " << id);
  return {};
}

std::future<Result<Lease>> AcquireAsync(Router& router, const std::string& model,
                                        Clock::duration wait = kPatience,
                                        std::function<bool()> cancelled = nullptr) {
  return std::async(std::launch::async, [&router, model, wait, cancelled] {
    return router.Acquire(model, Clock::now() + wait, cancelled);
  });
}

Result<Lease> Get(std::future<Result<Lease>>& f) {
  REQUIRE(f.wait_for(kPatience) == std::future_status::ready);
  return f.get();
}

struct Fixture {
  explicit Fixture(ConfigBuilder builder)
      : script(std::make_shared<BackendScript>()),
        router(std::make_shared<const Config>(builder.Build()), script->Factory()) {}
  std::shared_ptr<BackendScript> script;
  Router router;
};

ConfigBuilder DuoConfig() {
  return ConfigBuilder()
      .Group("duo", /*swap=*/false, /*exclusive=*/true, /*persistent=*/false)
      .Model("coder", "duo")
      .Model("helper", "duo")
      .Model("a")
      .Model("b", "", /*limit=*/2);
}

TEST_CASE("router: concurrent requests to a duo keep both members running", "[unit][router]") {
  Fixture f(DuoConfig());
  f.script->start_delay["coder"] = 100ms;
  f.script->start_delay["helper"] = 50ms;
  auto coder = AcquireAsync(f.router, "coder");
  auto helper = AcquireAsync(f.router, "helper");
  Result<Lease> c = Get(coder);
  Result<Lease> h = Get(helper);
  REQUIRE(c.ok());
  REQUIRE(h.ok());
  CHECK(c.value().proxy_url().origin == "http://127.0.0.1:1");
  CHECK(c.value().proxy_url().path_prefix == "/coder");
  CHECK(f.script->Running("coder"));
  CHECK(f.script->Running("helper"));
  CHECK(SnapshotOf(f.router, "coder").in_flight == 1);
  CHECK(SnapshotOf(f.router, "helper").backend.state == BackendState::kReady);
  // A second round of requests reuses the running pair.
  Result<Lease> again = f.router.Acquire("coder", Clock::now() + kPatience);
  REQUIRE(again.ok());
  CHECK(f.script->Starts("coder") == 1);
  CHECK(SnapshotOf(f.router, "coder").in_flight == 2);
}

TEST_CASE("router: a swap waits for in-flight leases, stops, then starts", "[unit][router]") {
  Fixture f(DuoConfig());
  Result<Lease> a = f.router.Acquire("a", Clock::now() + kPatience);
  REQUIRE(a.ok());
  auto b = AcquireAsync(f.router, "b");
  REQUIRE(Eventually([&] { return SnapshotOf(f.router, "b").queued == 1; }));
  CHECK(f.script->Running("a"));  // held by the lease
  a.value().Release();
  Result<Lease> lease_b = Get(b);
  REQUIRE(lease_b.ok());
  CHECK_FALSE(f.script->Running("a"));
  CHECK(f.script->Events() ==
        std::vector<std::string>{"start a", "ready a", "stop a", "start b", "ready b"});
}

TEST_CASE("router: a failed start fails all its waiters; the next request retries",
          "[unit][router]") {
  Fixture f(DuoConfig());
  f.script->fail["a"] = "exit status 1; last lines: out of memory";
  f.script->hold["a"] = true;
  auto first = AcquireAsync(f.router, "a");
  auto second = AcquireAsync(f.router, "a");
  REQUIRE(Eventually([&] { return SnapshotOf(f.router, "a").queued == 2; }));
  f.script->Release("a");
  for (auto* fut : {&first, &second}) {
    Result<Lease> r = Get(*fut);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == ErrorCode::kBackendFailed);
    CHECK_THAT(r.status().message(), Catch::Contains("out of memory"));
  }
  CHECK(f.script->Starts("a") == 1);
  {
    std::lock_guard lock(f.script->mu);
    f.script->fail["a"].clear();
  }
  CHECK(f.router.Acquire("a", Clock::now() + kPatience).ok());
  CHECK(f.script->Starts("a") == 2);
}

TEST_CASE("router: a cancelled waiter withdraws from the queue", "[unit][router]") {
  Fixture f(DuoConfig());
  Result<Lease> a = f.router.Acquire("a", Clock::now() + kPatience);
  REQUIRE(a.ok());
  std::atomic<bool> gone{false};
  auto b = AcquireAsync(f.router, "b", kPatience, [&] { return gone.load(); });
  REQUIRE(Eventually([&] { return SnapshotOf(f.router, "b").queued == 1; }));
  gone = true;
  Result<Lease> r = Get(b);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kUnavailable);
  CHECK(SnapshotOf(f.router, "b").queued == 0);
  // Nothing waits for "a" to stop any more: it keeps serving.
  a.value().Release();
  CHECK(f.router.Acquire("a", Clock::now() + kPatience).ok());
  CHECK(f.script->Starts("a") == 1);
  CHECK(f.script->Starts("b") == 0);
}

TEST_CASE("router: a waiter gives up at its deadline", "[unit][router]") {
  Fixture f(DuoConfig());
  Result<Lease> a = f.router.Acquire("a", Clock::now() + kPatience);
  REQUIRE(a.ok());
  Result<Lease> b = f.router.Acquire("b", Clock::now() + 200ms);
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().code() == ErrorCode::kTimeout);
  CHECK(SnapshotOf(f.router, "b").queued == 0);
  CHECK(f.script->Running("a"));
}

TEST_CASE("router: unknown models and the concurrency limit fail at once", "[unit][router]") {
  Fixture f(DuoConfig());
  Result<Lease> unknown = f.router.Acquire("nope", Clock::now() + kPatience);
  CHECK(unknown.status().code() == ErrorCode::kNotFound);
  Result<Lease> one = f.router.Acquire("b", Clock::now() + kPatience);
  Result<Lease> two = f.router.Acquire("b", Clock::now() + kPatience);
  REQUIRE(one.ok());
  REQUIRE(two.ok());
  Result<Lease> three = f.router.Acquire("b", Clock::now() + kPatience);
  REQUIRE_FALSE(three.ok());
  CHECK(three.status().code() == ErrorCode::kTooManyRequests);
  CHECK(three.status().message() == "model \"b\": concurrency limit 2 reached");
  Lease moved = std::move(two.value());
  moved = Lease();  // move-assigning over a live lease releases it
  CHECK(f.router.Acquire("b", Clock::now() + kPatience).ok());
}

TEST_CASE("router: unload stops at once and blocks until stopped", "[unit][router]") {
  Fixture f(DuoConfig());
  Result<Lease> a = f.router.Acquire("a", Clock::now() + kPatience);
  REQUIRE(a.ok());
  f.router.Unload("a");  // the lease is still held
  CHECK_FALSE(f.script->Running("a"));
  CHECK(SnapshotOf(f.router, "a").backend.state == BackendState::kStopped);
  CHECK(SnapshotOf(f.router, "a").in_flight == 0);
  a.value().Release();  // harmless
  CHECK(f.router.Acquire("a", Clock::now() + kPatience).ok());
  CHECK(f.script->Starts("a") == 2);
}

TEST_CASE("router: unload during a start keeps the waiter, which starts the model again",
          "[unit][router]") {
  Fixture f(DuoConfig());
  f.script->hold["a"] = true;
  auto waiter = AcquireAsync(f.router, "a");
  REQUIRE(Eventually([&] { return f.script->Starts("a") == 1; }));
  f.router.Unload("");
  REQUIRE(Eventually([&] { return f.script->Starts("a") == 2; }));
  f.script->Release("a");
  REQUIRE(Get(waiter).ok());
}

TEST_CASE("router: a model idle for its ttl is stopped", "[unit][router]") {
  Fixture f(ConfigBuilder().Model("a", "", 10, /*ttl_seconds=*/1));
  Clock::time_point released;
  {
    Result<Lease> a = f.router.Acquire("a", Clock::now() + kPatience);
    REQUIRE(a.ok());
    released = Clock::now();
  }
  REQUIRE(Eventually([&] { return !f.script->Running("a"); }));
  CHECK(Clock::now() - released >= 900ms);
  CHECK(SnapshotOf(f.router, "a").backend.state == BackendState::kStopped);
}

TEST_CASE("router: a crashed backend is started again by the next request", "[unit][router]") {
  Fixture f(DuoConfig());
  REQUIRE(f.router.Acquire("a", Clock::now() + kPatience).ok());
  f.script->Crash("a");
  Result<Lease> again = f.router.Acquire("a", Clock::now() + kPatience);
  REQUIRE(again.ok());
  CHECK(f.script->Starts("a") == 2);
  CHECK(f.router.LogTail("a", 10) == "log of a");
  CHECK(f.router.LogTail("nope", 10).empty());
}

TEST_CASE("router: AwaitNotReady waits until the Router itself has heard of the exit",
          "[unit][router]") {
  Fixture f(DuoConfig());
  REQUIRE(f.router.Acquire("a", Clock::now() + kPatience).ok());
  std::function<void()> notify = f.script->Die("a");
  // The backend says it is down; the Router does not know yet, and would admit to it.
  CHECK(SnapshotOf(f.router, "a").backend.state == BackendState::kStopped);
  CHECK_FALSE(f.router.AwaitNotReady("a", Clock::now() + 20ms));
  std::thread late(notify);
  CHECK(f.router.AwaitNotReady("a", Clock::now() + kPatience));
  late.join();
  REQUIRE(f.router.Acquire("a", Clock::now() + kPatience).ok());
  CHECK(f.script->Starts("a") == 2);
  CHECK(f.router.AwaitNotReady("b", Clock::now()));  // never started
}

TEST_CASE("router: AwaitFailure says why a model stopped serving", "[unit][router]") {
  Fixture f(DuoConfig());
  REQUIRE(f.router.Acquire("a", Clock::now() + kPatience).ok());
  CHECK(f.router.AwaitFailure("a", Clock::now() + 20ms).empty());  // still ready
  std::function<void()> notify = f.script->Die("a");
  auto failure = std::async(std::launch::async,
                            [&] { return f.router.AwaitFailure("a", Clock::now() + kPatience); });
  std::thread late(notify);
  CHECK(failure.get() == "backend exited: exit status 139");
  late.join();
  // A new start forgets the exit; a stop is described by its reason.
  REQUIRE(f.router.Acquire("a", Clock::now() + kPatience).ok());
  CHECK(f.router.AwaitFailure("a", Clock::now() + 20ms).empty());
  f.router.Unload("a");
  CHECK(f.router.AwaitFailure("a", Clock::now()) == "backend stopping (unload)");
}

TEST_CASE("router: preload starts the configured models without blocking", "[unit][router]") {
  Fixture f(DuoConfig().Preload({"coder", "helper"}));
  f.router.Preload();
  REQUIRE(Eventually([&] {
    return SnapshotOf(f.router, "coder").backend.state == BackendState::kReady &&
           SnapshotOf(f.router, "helper").backend.state == BackendState::kReady;
  }));
}

TEST_CASE("router: shutdown fails waiters, stops backends, refuses new requests",
          "[unit][router]") {
  Fixture f(DuoConfig());
  Result<Lease> a = f.router.Acquire("a", Clock::now() + kPatience);
  REQUIRE(a.ok());
  auto b = AcquireAsync(f.router, "b");
  REQUIRE(Eventually([&] { return SnapshotOf(f.router, "b").queued == 1; }));
  f.router.Shutdown();
  Result<Lease> r = Get(b);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kUnavailable);
  CHECK_FALSE(f.script->Running("a"));
  CHECK(f.router.Acquire("a", Clock::now() + kPatience).status().code() == ErrorCode::kUnavailable);
}

TEST_CASE("router: without a backend factory, requests fail instead of hanging", "[unit][router]") {
  Router router(std::make_shared<const Config>(ConfigBuilder().Model("a").Build()), nullptr);
  Result<Lease> r = router.Acquire("a", Clock::now() + kPatience);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kBackendFailed);
  router.Unload("");
  CHECK(SnapshotOf(router, "a").backend.state == BackendState::kStopped);
}

TEST_CASE("router: MaxResident follows the groups, the budget, learned footprints and reloads",
          "[unit][router][capacity]") {
  CHECK(Fixture(DuoConfig()).router.MaxResident() == 2);  // the duo
  // A 10 GiB budget, ungrouped models that neither swap nor are exclusive (as with budgets).
  Config c = ConfigBuilder().Model("a").Model("b").Model("c").Build();
  c.groups[std::string(kDefaultGroup)].swap = false;
  c.groups[std::string(kDefaultGroup)].exclusive = false;
  c.memory.budget.ram = uint64_t{10} << 30;
  for (const char* id : {"a", "b", "c"}) c.models[id].memory.ram = uint64_t{4} << 30;
  auto script = std::make_shared<BackendScript>();
  Router router(std::make_shared<const Config>(c), script->Factory());
  CHECK(router.MaxResident() == 2);
  Footprint seven;
  seven.ram = uint64_t{7} << 30;
  router.SetFootprint("b", seven);
  router.SetFootprint("c", seven);
  CHECK(router.MaxResident() == 1);  // 4 + 7 GiB do not fit in 10
  c.memory.budget.ram = uint64_t{20} << 30;
  router.Reconfigure(std::make_shared<const Config>(c));
  CHECK(router.MaxResident() == 3);  // 4 + 7 + 7 GiB
}

}  // namespace
}  // namespace swapd
