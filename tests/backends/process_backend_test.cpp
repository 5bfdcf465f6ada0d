// Integration tests of ProcessBackend with real processes: the fake llama-server and small
// /bin/sh scripts, on free loopback ports.
#include "backends/process_backend.h"

#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/backends/backend_test_util.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using backend_testing::FakeModel;
using backend_testing::ProcessRunning;
using backend_testing::WaitFor;
using backend_testing::ZombieChildren;

Config TestConfig(std::chrono::seconds health_timeout = std::chrono::seconds(60)) {
  Config config;
  config.health_check_timeout = health_timeout;
  return config;
}

long MillisSince(Clock::time_point start) {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

// The pid the fake backend printed for its grandchild, or 0.
int GrandchildPid(const std::string& log) {
  const std::string marker = "spawned grandchild pid ";
  size_t at = log.find(marker);
  return at == std::string::npos ? 0 : std::stoi(log.substr(at + marker.size()));
}

TEST_CASE("ProcessBackend: start, ready, stop", "[integration][backend]") {
  ModelConfig model = FakeModel("basic", {"--load-ms", "200"});
  ProcessBackend backend(model, TestConfig());
  CHECK(backend.Info().state == BackendState::kStopped);
  Status s = backend.Start();
  INFO(s.message());
  REQUIRE(s.ok());
  BackendInfo info = backend.Info();
  CHECK(info.state == BackendState::kReady);
  REQUIRE(info.pid > 0);
  httplib::Client client(model.proxy);
  auto res = client.Get("/health");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(backend.Start().ok());  // already ready
  CHECK(backend.Info().pid == info.pid);
  CHECK_THAT(backend.LogTail(50), Catch::Contains("listening on http://127.0.0.1:"));

  backend.Stop();
  CHECK(backend.Info().state == BackendState::kStopped);
  CHECK(backend.Info().pid == 0);
  CHECK_FALSE(ProcessRunning(info.pid));
  backend.Stop();  // idempotent
  CHECK(backend.Info().state == BackendState::kStopped);
  CHECK(ZombieChildren().empty());
}

TEST_CASE("ProcessBackend: concurrent Start calls join one start", "[integration][backend]") {
  ProcessBackend backend(FakeModel("join", {"--load-ms", "300"}), TestConfig());
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] { ok += backend.Start().ok() ? 1 : 0; });
  }
  for (auto& t : threads) t.join();
  CHECK(ok == 6);
  std::string log = backend.LogTail(1000);
  size_t first = log.find("listening on");
  REQUIRE(first != std::string::npos);
  CHECK(log.find("listening on", first + 1) == std::string::npos);  // one process only
  backend.Stop();
  CHECK(ZombieChildren().empty());
}

TEST_CASE("ProcessBackend: Stop while starting cancels the start", "[integration][backend]") {
  ProcessBackend backend(FakeModel("cancel", {"--load-ms", "60000"}), TestConfig());
  Status start_result;
  std::thread starter([&] { start_result = backend.Start(); });
  REQUIRE(WaitFor([&] { return backend.Info().pid > 0; }));
  const int pid = backend.Info().pid;
  CHECK(backend.Info().state == BackendState::kStarting);
  auto begin = Clock::now();
  backend.Stop();
  starter.join();
  CHECK(MillisSince(begin) < 20000);
  CHECK(start_result.code() == ErrorCode::kUnavailable);
  CHECK_THAT(start_result.message(), Catch::Contains("cancelled"));
  CHECK(backend.Info().state == BackendState::kStopped);
  CHECK_FALSE(ProcessRunning(pid));
  CHECK(ZombieChildren().empty());
}

TEST_CASE("ProcessBackend: the prefetch runs before the spawn and a Stop cancels it",
          "[integration][backend]") {
  ModelConfig model = FakeModel("prefetched");
  model.prefetch = true;
  std::atomic<bool> entered{false}, saw_cancel{false};
  ProcessBackendOptions options;
  options.prefetch = [&](const ModelConfig& m, const std::function<bool()>& cancelled) {
    CHECK(m.id == "prefetched");
    entered = true;
    while (!cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    saw_cancel = true;
  };
  ProcessBackend backend(model, TestConfig(), options);
  Status start_result;
  std::thread starter([&] { start_result = backend.Start(); });
  REQUIRE(WaitFor([&] { return entered.load(); }));
  CHECK(backend.Info().state == BackendState::kStarting);
  CHECK(backend.Info().pid == 0);  // nothing spawned while prefetching
  backend.Stop();
  starter.join();
  CHECK(saw_cancel);
  CHECK(start_result.code() == ErrorCode::kUnavailable);
  CHECK(backend.Info().state == BackendState::kStopped);
  CHECK(ZombieChildren().empty());

  // Without `prefetch: true` on the model, the hook is not called.
  bool called = false;
  options.prefetch = [&](const ModelConfig&, const std::function<bool()>&) { called = true; };
  ProcessBackend plain(FakeModel("plain"), TestConfig(), options);
  REQUIRE(plain.Start().ok());
  CHECK_FALSE(called);
  plain.Stop();
}

TEST_CASE("ProcessBackend: readiness is noticed soon after the backend is ready",
          "[integration][backend]") {
  // Timings are measured in bench/; this only checks that no slow poll interval hides readiness.
  ProcessBackend backend(FakeModel("fast", {"--load-ms", "300"}), TestConfig());
  auto begin = Clock::now();
  REQUIRE(backend.Start().ok());
  long took = MillisSince(begin);
  INFO("start took " << took << " ms for a 300 ms load");
  CHECK(took >= 300);
  CHECK(took < 10000);
  backend.Stop();
}

TEST_CASE("ProcessBackend: exit during load fails at once with exit code and log tail",
          "[integration][backend]") {
  ProcessBackend backend(
      FakeModel("dies", {"--log-lines", "40", "--load-ms", "400", "--exit-during-load", "3"}),
      TestConfig(std::chrono::seconds(120)));
  std::atomic<int> callbacks{0};
  backend.SetExitCallback([&](const std::string& reason) {
    if (reason.find("exit code 3") != std::string::npos) ++callbacks;
  });
  auto begin = Clock::now();
  Status s = backend.Start();
  CHECK(MillisSince(begin) < 30000);  // not the 120 s health timeout
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == ErrorCode::kBackendFailed);
  CHECK_THAT(s.message(), Catch::Contains("exited during start-up: exit code 3"));
  CHECK_THAT(s.message(), Catch::Contains("error loading model"));
  CHECK_THAT(s.message(), Catch::Contains("exiting due to model loading error"));
  BackendInfo info = backend.Info();
  CHECK(info.state == BackendState::kFailed);
  CHECK(info.pid == 0);
  CHECK(info.last_error == s.message());
  CHECK(WaitFor([&] { return callbacks == 1; }));  // the Router hears of it too
  CHECK(ZombieChildren().empty());
  backend.Stop();  // a failed backend stops to stopped, keeping the reason
  CHECK(backend.Info().state == BackendState::kStopped);
  CHECK(backend.Info().last_error == s.message());
}

TEST_CASE("ProcessBackend: no readiness within healthCheckTimeout kills the group",
          "[integration][backend]") {
  ProcessBackend backend(FakeModel("stuck", {"--never-ready", "--ignore-sigterm"}),
                         // Long enough for a loaded machine (ASan) to get the fake listening,
                         // so that the last check saw its 503.
                         TestConfig(std::chrono::seconds(4)));
  int pid = 0;
  std::thread watcher([&] { WaitFor([&] { return (pid = backend.Info().pid) > 0; }); });
  Status s = backend.Start();
  watcher.join();
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == ErrorCode::kUnavailable);
  CHECK_THAT(s.message(), Catch::Contains("not ready within 4s"));
  CHECK_THAT(s.message(), Catch::Contains("HTTP 503"));
  CHECK_THAT(s.message(), Catch::Contains("the model stays loading"));
  CHECK(backend.Info().state == BackendState::kFailed);
  REQUIRE(pid > 0);
  CHECK_FALSE(ProcessRunning(pid));  // it ignored SIGTERM: the group was SIGKILLed
  CHECK(ZombieChildren().empty());
}

TEST_CASE("ProcessBackend: a backend ignoring SIGTERM is SIGKILLed after unloadTimeout",
          "[integration][backend]") {
  ModelConfig model = FakeModel("stubborn", {"--ignore-sigterm"});
  model.unload_timeout = std::chrono::seconds(1);
  ProcessBackend backend(model, TestConfig());
  REQUIRE(backend.Start().ok());
  const int pid = backend.Info().pid;
  auto begin = Clock::now();
  backend.Stop();
  long took = MillisSince(begin);
  CHECK(took >= 900);
  CHECK(took < 20000);
  CHECK(backend.Info().state == BackendState::kStopped);
  CHECK_FALSE(ProcessRunning(pid));
  CHECK(ZombieChildren().empty());
}

TEST_CASE("ProcessBackend: the grandchild dies with the group and its pipe does not hang stop",
          "[integration][backend]") {
  SECTION("grandchild of the fake backend, stop by SIGTERM") {
    ProcessBackend backend(FakeModel("family", {"--spawn-grandchild"}), TestConfig());
    REQUIRE(backend.Start().ok());
    const int pid = backend.Info().pid;
    const int grandchild = GrandchildPid(backend.LogTail(100));
    REQUIRE(grandchild > 0);
    CHECK(backend_testing::ReadProcStat(grandchild).pgrp == pid);
    backend.Stop();
    CHECK(WaitFor([&] { return !ProcessRunning(grandchild); }));
    CHECK_FALSE(ProcessRunning(pid));
  }
  SECTION("a grandchild that ignores SIGTERM and holds the pipe gets SIGKILL at unloadTimeout") {
    // The shell starts a TERM-ignoring sleeper that inherits stdout, then becomes the backend.
    // The leader obeys SIGTERM at once; the rest of its run has the rest of the grace.
    ModelConfig model = FakeModel("wrapper");
    std::string cmd;
    for (const auto& a : model.argv) cmd += " '" + a + "'";
    model.argv = {"/bin/sh", "-c",
                  "trap '' TERM; sleep 600 & echo \"sleeper $!\"; trap - TERM; exec" + cmd};
    model.unload_timeout = std::chrono::seconds(2);
    ProcessBackend backend(model, TestConfig());
    REQUIRE(backend.Start().ok());
    std::string log = backend.LogTail(100);
    size_t at = log.find("sleeper ");
    REQUIRE(at != std::string::npos);
    const int sleeper = std::stoi(log.substr(at + 8));
    REQUIRE(ProcessRunning(sleeper));
    auto begin = Clock::now();
    backend.Stop();
    CHECK(MillisSince(begin) >= 1900);     // the sleeper had its grace
    CHECK_FALSE(ProcessRunning(sleeper));  // and Stop() returned once it was gone
    CHECK(backend.Info().state == BackendState::kStopped);
  }
  CHECK(ZombieChildren().empty());
}

TEST_CASE("ProcessBackend: a crash while ready is noticed at once", "[integration][backend]") {
  ProcessBackend backend(FakeModel("crashy"), TestConfig());
  std::mutex mu;
  std::string reason;
  int calls = 0;
  backend.SetExitCallback([&](const std::string& r) {
    std::lock_guard<std::mutex> lock(mu);
    reason = r;
    ++calls;
  });
  REQUIRE(backend.Start().ok());
  const int pid = backend.Info().pid;
  REQUIRE(::kill(pid, SIGKILL) == 0);
  REQUIRE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return calls > 0;
  }));
  {
    std::lock_guard<std::mutex> lock(mu);
    CHECK_THAT(reason, Catch::Contains("exited unexpectedly: killed by signal 9 (SIGKILL)"));
    CHECK_THAT(reason, Catch::Contains("listening on"));  // the log tail
  }
  CHECK(backend.Info().state == BackendState::kFailed);
  CHECK(backend.Info().pid == 0);

  // The next start works; a requested stop does not call the callback.
  REQUIRE(backend.Start().ok());
  CHECK(backend.Info().pid != pid);
  backend.Stop();
  std::lock_guard<std::mutex> lock(mu);
  CHECK(calls == 1);
  CHECK(ZombieChildren().empty());
}

TEST_CASE("ProcessBackend: the backend sees swapd's env plus the model's, found via its PATH",
          "[integration][backend]") {
  ::setenv("SWAPD_TEST_FROM_DAEMON", "inherited", 1);
  ::setenv("LD_LIBRARY_PATH", "/daemon/lib", 1);
  ModelConfig model = FakeModel("envy");
  std::filesystem::path binary(FAKE_BACKEND_BINARY);
  model.argv[0] = binary.filename().string();  // a bare name: found through the child's PATH
  model.env = {{"PATH", binary.parent_path().string() + ":/usr/bin:/bin"},
               {"CUDA_VISIBLE_DEVICES", ""},
               {"LD_LIBRARY_PATH", "/opt/fork/lib"}};
  ProcessBackend backend(model, TestConfig());
  Status s = backend.Start();
  ::unsetenv("SWAPD_TEST_FROM_DAEMON");
  ::unsetenv("LD_LIBRARY_PATH");
  INFO(s.message());
  REQUIRE(s.ok());
  httplib::Client client(model.proxy);
  auto res = client.Get("/env");
  REQUIRE(res);
  REQUIRE(res->status == 200);
  nlohmann::json env = nlohmann::json::parse(res->body);
  REQUIRE(env.contains("CUDA_VISIBLE_DEVICES"));
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "");
  CHECK(env["LD_LIBRARY_PATH"] == "/opt/fork/lib");
  CHECK(env["SWAPD_TEST_FROM_DAEMON"] == "inherited");
  backend.Stop();
}

TEST_CASE("ProcessBackend: megabytes of log never block the backend", "[integration][backend]") {
  // ~9 MB of load lines before readiness: a backend whose pipe is not read would block forever.
  ProcessBackend backend(FakeModel("chatty", {"--log-lines", "100000"}), TestConfig());
  REQUIRE(backend.Start().ok());
  // Ready can be seen a moment before the monitor has read the last lines from the pipe.
  std::string all;
  CHECK(WaitFor([&] {
    all = backend.LogTail(1000000);
    return all.find("fake load line 100000 of 100000") != std::string::npos;
  }));
  CHECK(all.size() <= LogRing::kDefaultCapacityBytes + 100000);  // bounded (plus '\n's)
  CHECK(all.size() > LogRing::kDefaultCapacityBytes / 2);
  CHECK_THAT(all, Catch::Contains("fake load line 100000 of 100000"));
  CHECK_THAT(all, !Catch::Contains("fake load line 1 of 100000"));
  backend.Stop();
}

TEST_CASE("ProcessBackend: cmdStop runs without a shell with ${PID} substituted",
          "[integration][backend]") {
  ModelConfig model = FakeModel("custom-stop", {"--ignore-sigterm"});
  model.stop_argv = {"/bin/sh", "-c", "echo stopping ${PID}; kill -KILL ${PID}"};
  model.unload_timeout = std::chrono::seconds(60);
  ProcessBackend backend(model, TestConfig());
  REQUIRE(backend.Start().ok());
  const int pid = backend.Info().pid;
  auto begin = Clock::now();
  backend.Stop();
  CHECK(MillisSince(begin) < 30000);  // cmdStop killed it; no 60 s grace
  CHECK_THAT(backend.LogTail(20), Catch::Contains("cmdStop: stopping " + std::to_string(pid)));
  CHECK_FALSE(ProcessRunning(pid));
  CHECK(ZombieChildren().empty());
}

TEST_CASE("ProcessBackend: a missing program fails the start with a clear message",
          "[integration][backend]") {
  ModelConfig model = FakeModel("missing");
  model.argv = {"llama-server-that-does-not-exist", "--port", "1"};
  model.env = {{"PATH", "/nonexistent"}};
  ProcessBackend backend(model, TestConfig());
  Status s = backend.Start();
  CHECK(s.code() == ErrorCode::kBackendFailed);
  CHECK_THAT(s.message(),
             Catch::Contains("\"llama-server-that-does-not-exist\" not found in PATH"));
  CHECK(backend.Info().state == BackendState::kFailed);
}

TEST_CASE("ProcessBackend: checkEndpoint none is ready when spawned", "[integration][backend]") {
  std::mutex mu;
  std::vector<std::string> heard;  // what the daemon's line listener got
  ProcessBackendOptions options;
  options.on_output_line = [&](const std::string& model, std::string_view line) {
    std::lock_guard<std::mutex> lock(mu);
    heard.push_back(model + ": " + std::string(line));
  };
  ProcessBackend backend(backend_testing::ShellModel("script", "echo hello; exec sleep 600"),
                         TestConfig(), options);
  REQUIRE(backend.Start().ok());
  CHECK(backend.Info().state == BackendState::kReady);
  CHECK(WaitFor([&] { return backend.LogTail(5) == "hello\n"; }));
  {
    std::lock_guard<std::mutex> lock(mu);
    CHECK(heard == std::vector<std::string>{"script: hello"});
  }
  backend.Stop();
  CHECK(backend.Info().state == BackendState::kStopped);
  CHECK(ZombieChildren().empty());
}

TEST_CASE("ProcessBackend: Start during a stop waits for it, then starts anew",
          "[integration][backend]") {
  ModelConfig model = FakeModel("restart", {"--ignore-sigterm"});
  model.unload_timeout = std::chrono::seconds(1);  // the stop takes about a second
  ProcessBackend backend(model, TestConfig());
  REQUIRE(backend.Start().ok());
  const int first = backend.Info().pid;
  std::thread stopper([&] { backend.Stop(); });
  REQUIRE(WaitFor([&] { return backend.Info().state == BackendState::kStopping; }));
  Status s = backend.Start();
  stopper.join();
  INFO(s.message());
  CHECK(s.ok());
  CHECK(backend.Info().state == BackendState::kReady);
  CHECK(backend.Info().pid != first);
  CHECK_FALSE(ProcessRunning(first));
  backend.Stop();
  CHECK(ZombieChildren().empty());
}

}  // namespace
}  // namespace swapd
