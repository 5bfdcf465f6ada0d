// Fault-injection integration tests: the real swapd in front of fake backends that misbehave
// (garbage instead of HTTP, silent hang-ups, kept-alive connections closed, a POST that kills its
// backend, refused connections, stalls, stuck or failing cmdStop, a port already taken). Each case
// checks the defined outcome and that swapd still answers /health and serves a healthy model
// afterwards. Clients that misbehave: client_fault_test.cpp.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/fake_backend_process.h"
#include "tests/support/fault_checks.h"
#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
// Each condition waited for costs an HTTP request or a scan of /proc: looked at every 20 ms.
constexpr auto kPoll = 20ms;

// A model whose backend answers model routes with a connection fault, next to a healthy one.
void CheckConnectionFault(const std::string& id, const std::string& flag) {
  const int port = FreeLoopbackPort(), healthy_port = FreeLoopbackPort();
  auto swapd =
      StartSwapd("models:\n" + FakeModelYaml(id, port, flag) + FakeModelYaml("ok-m", healthy_port));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  HttpReply r = HttpPost(url, "/v1/chat/completions", ChatBody(id, false), "application/json", 60s);
  INFO(r.Describe());
  CHECK(r.status == 502);
  CHECK_THAT(r.content_type, Catch::Contains("application/json"));
  CHECK_FALSE(ErrorMessage(r.body).empty());

  StreamedReply s = StreamPost(url, "/v1/chat/completions", ChatBody(id, true));
  INFO("streamed: " << s.status << " " << s.body << " " << s.error);
  CHECK(s.status == 502);
  CHECK_FALSE(ErrorMessage(s.body).empty());

  ExpectHealthy(url, "ok-m");
}

TEST_CASE("a backend that answers garbage instead of HTTP gives 502 JSON",
          "[integration][faults]") {
  CheckConnectionFault("garbage-m", "--garbage-response");
}

TEST_CASE("a backend that closes without a response gives 502 JSON", "[integration][faults]") {
  CheckConnectionFault("close-m", "--close-without-response");
}

TEST_CASE("a backend that closes its kept-alive connections: each request goes again on a new one",
          "[integration][faults]") {
  // Real llama-server closes its connection after every streamed answer, a moment after the last
  // chunk: swapd's next request on that pooled connection finds it closed. That is not the
  // client's error, whatever the method (the fake closes every reused connection, to be sure).
  auto swapd = StartSwapd("models:\n" +
                          FakeModelYaml("kept-m", FreeLoopbackPort(), "--close-kept-connections"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  for (int i = 0; i < 6; ++i) {
    if (i % 2 == 0) {
      StreamedReply s = StreamPost(url, "/v1/chat/completions", ChatBody("kept-m", true));
      INFO("streamed: " << s.status << " " << s.body << " " << s.error);
      CHECK(s.status == 200);
      CHECK_THAT(s.body, Catch::Contains("[DONE]"));
    } else {
      HttpReply r =
          HttpPost(url, "/v1/chat/completions", ChatBody("kept-m", false), "application/json", 60s);
      INFO(r.Describe());
      CHECK(r.status == 200);
    }
  }
  // The second try was needed: the backend did close kept connections (its output is read apart
  // from the answers, so it is waited for).
  CHECK(WaitFor([&] {
    return HttpGet(url, "/logs").body.find("closing a kept-alive connection without answering") !=
           std::string::npos;
  }));
}

TEST_CASE("a POST that kills its backend on a kept-alive connection is not sent again",
          "[integration][faults]") {
  // The second request ends the fake (--crash-after 2), on the connection the first one left.
  // Sent again on a restarted backend it would have answered 200: the client gets the exit.
  auto swapd =
      StartSwapd("models:\n" + FakeModelYaml("killed-m", FreeLoopbackPort(), "--crash-after 2"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  HttpReply first =
      HttpPost(url, "/v1/chat/completions", ChatBody("killed-m", false), "application/json", 60s);
  CHECK(first.status == 200);
  HttpReply second =
      HttpPost(url, "/v1/chat/completions", ChatBody("killed-m", false), "application/json", 60s);
  INFO(second.Describe());
  CHECK(second.status == 502);
  CHECK_THAT(ErrorMessage(second.body), Catch::Contains("exit code 3"));
}

TEST_CASE("a ready backend that refuses connections gives 502 JSON at once",
          "[integration][faults]") {
  // The backend listens on one port, the proxy URL names another where nothing listens, and
  // checkEndpoint: none makes it "ready" as soon as it is spawned.
  const int backend_port = FreeLoopbackPort(), dead_port = FreeLoopbackPort();
  const std::string yaml =
      "models:\n  \"refuse-m\":\n    cmd: " FAKE_BACKEND_BINARY " --port " +
      std::to_string(backend_port) +
      " --model refuse-m\n    proxy: http://127.0.0.1:" + std::to_string(dead_port) +
      "\n    checkEndpoint: none\n" + FakeModelYaml("ok-m", FreeLoopbackPort());
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  const auto start = Clock::now();
  HttpReply r =
      HttpPost(url, "/v1/chat/completions", ChatBody("refuse-m", false), "application/json", 60s);
  const auto took = Clock::now() - start;
  INFO(r.Describe() << " after "
                    << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                    << " ms");
  CHECK(r.status == 502);
  CHECK_THAT(ErrorMessage(r.body),
             Catch::Contains("refuse-m") && Catch::Contains("could not reach the backend"));
  CHECK(took < 20s);
  ExpectHealthy(url, "ok-m");
}

TEST_CASE("a backend that hangs mid-stream is cut by --upstream-idle-timeout",
          "[integration][faults]") {
  const int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("hang-m", port, "--hang-mid-stream 3") +
                              FakeModelYaml("ok-m", FreeLoopbackPort()),
                          {"--upstream-idle-timeout", "2"});
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  const auto start = Clock::now();
  StreamedReply s = StreamPost(url, "/v1/chat/completions", ChatBody("hang-m", true, 8));
  INFO(s.body << " " << s.error);
  CHECK(s.status == 200);
  CHECK_THAT(s.body, Catch::Contains("\"role\":\"assistant\""));
  CHECK_THAT(s.body, Catch::Contains("stalled"));
  CHECK_THAT(s.body, !Catch::Contains("[DONE]"));
  CHECK(Clock::now() - start < 30s);
  ExpectHealthy(url, "ok-m");
}

// A model whose cmdStop is `stop_cmd`, then a swap to another model.
void CheckStopCommandFault(const std::string& id, const std::string& stop_cmd,
                           const std::string& leftover_needle) {
  const std::string extra = "    cmdStop: " + stop_cmd + "\n    unloadTimeout: 1\n";
  auto swapd = StartSwapd("models:\n" + FakeModelYaml(id, FreeLoopbackPort(), "", extra) +
                          FakeModelYaml("ok-m", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  REQUIRE(
      HttpPost(url, "/v1/chat/completions", ChatBody(id, false), "application/json", 60s).status ==
      200);
  REQUIRE_FALSE(PidsWithArg("--model " + id).empty());
  const auto start = Clock::now();
  ExpectHealthy(url, "ok-m");  // the swap stops `id` first
  CHECK(Clock::now() - start < 30s);
  CHECK(WaitFor([&] { return PidsWithArg("--model " + id).empty(); }, 20s, kPoll));
  if (!leftover_needle.empty()) {
    INFO("cmdStop process still running: " << leftover_needle);
    CHECK(WaitFor([&] { return PidsWithArg(leftover_needle).empty(); }, 20s, kPoll));
  }
}

TEST_CASE("a cmdStop that hangs: the model is still killed and the swap completes",
          "[integration][faults]") {
  CheckStopCommandFault("stophang-m", "sleep 587.25", "sleep 587.25");
}

TEST_CASE("a cmdStop that fails: the model is still stopped and the swap completes",
          "[integration][faults]") {
  CheckStopCommandFault("stopfail-m", "\"false\"", "");
}

// swapd checks the proxy's local port before it spawns: a process already listening there would
// answer the readiness probe and the requests in place of the backend.
TEST_CASE("a backend port already taken: 502 naming the bind failure, no impostor",
          "[integration][faults]") {
  auto impostor = StartFakeBackend({"--model", "impostor"});
  REQUIRE(impostor.ok());
  const int port = impostor.value().port;
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("taken-m", port) +
                          FakeModelYaml("ok-m", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  HttpReply r =
      HttpPost(url, "/v1/chat/completions", ChatBody("taken-m", false), "application/json", 60s);
  INFO(r.Describe());
  CHECK(r.status == 502);
  CHECK_THAT(ErrorMessage(r.body), Catch::Contains("bind"));
  HttpReply stats = HttpGet(impostor.value().base_url, "/stats");
  INFO("impostor: " << stats.Describe());
  CHECK(json::parse(stats.body, nullptr, false).value("requests", -1) == 0);
  ExpectHealthy(url, "ok-m");
}

}  // namespace
}  // namespace swapd::testing
