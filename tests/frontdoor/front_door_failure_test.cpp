// Integration tests of the front door when something goes away: a client that hangs up (while
// streaming, while its answer is awaited, while its model starts), a backend that crashes, dies
// or fails to start, and swapd itself killed. The real swapd binary, real fake-llama-server
// backends, loopback sockets, ephemeral ports.
#include <httplib.h>
#include <catch2/catch.hpp>

#include <signal.h>

#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// Polls the fake backend's /stats (through /upstream) until `field` is at least `n`.
PollResult PollStats(const std::string& base_url, const std::string& model,
                     const std::string& field, int n, std::chrono::milliseconds deadline = 30s) {
  return PollUntil(
      base_url, "/upstream/" + model + "/stats",
      [&](const HttpReply& reply) {
        auto doc = json::parse(reply.body, nullptr, false);
        return doc.is_object() && doc.value(field, 0) >= n;
      },
      deadline, 50ms);
}

TEST_CASE("a client that hangs up stops the backend's stream", "[integration][front]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("cd-m", port, "--tokens-per-second 20"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  int chunks = 0;
  StreamedReply r = StreamPost(url, "/v1/chat/completions", ChatBody("cd-m", true, 500),
                               [&](const std::string&) { return ++chunks < 3; });
  CHECK(r.status == 200);
  PollResult cancelled = PollStats(url, "cd-m", "cancelled_streams", 1);
  INFO(cancelled.last.Describe());
  CHECK(cancelled.met);
}

TEST_CASE("a client that hangs up before its non-streamed answer stops the backend's work",
          "[integration][front]") {
  // Alone, the request waits for its backend on a thread, which looks at the client every
  // second; beside another request it waits in the epoll set, and the server looks.
  const bool beside = GENERATE(false, true);
  CAPTURE(beside);
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("hn-m", port, "--tokens-per-second 20"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  REQUIRE(HttpPost(url, "/v1/chat/completions", ChatBody("hn-m", false, 1), "application/json",
                   60s)
              .status == 200);  // started
  std::future<HttpReply> other;
  if (beside) {
    // 100 tokens: 5 s, in flight while the other request arrives.
    other = std::async(std::launch::async, [&] {
      return HttpPost(url, "/v1/chat/completions", ChatBody("hn-m", false, 100), "application/json",
                      60s);
    });
    REQUIRE(PollStats(url, "hn-m", "active_requests", 1).met);
  }
  {
    // 400 tokens: 20 s. The client gives up after 1 s and closes its connection.
    httplib::Client client(url);
    client.set_read_timeout(1s);
    auto abandoned =
        client.Post("/v1/chat/completions", ChatBody("hn-m", false, 400), "application/json");
    CHECK(!abandoned);
  }
  // Sooner than the 20 s the backend would take to answer.
  PollResult cancelled = PollStats(url, "hn-m", "cancelled_requests", 1, 15s);
  INFO(cancelled.last.Describe());
  CHECK(cancelled.met);
  if (beside) CHECK(other.get().status == 200);
}

TEST_CASE("a request whose client hangs up while its model starts leaves the queue",
          "[integration][front]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("nr-m", port, "--never-ready"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  auto queued = [&](int n) {
    return PollUntil(
        url, "/running",
        [n](const HttpReply& reply) {
          auto doc = json::parse(reply.body, nullptr, false);
          if (!doc.is_object()) return false;
          for (const auto& m : doc["running"]) {
            if (m["model"] == "nr-m") return m["state"] == "starting" && m["queued"] == n;
          }
          return false;
        },
        20s);
  };
  // The client gives up after 5 s and closes its connection.
  auto abandoned = std::async(std::launch::async, [&] {
    httplib::Client client(url);
    client.set_read_timeout(5s);
    return static_cast<bool>(
        client.Post("/v1/chat/completions", ChatBody("nr-m", false), "application/json"));
  });
  PollResult waiting = queued(1);
  INFO(waiting.last.Describe());
  CHECK(waiting.met);
  CHECK(!abandoned.get());
  // The model never becomes ready, so only the client's going can end the wait.
  PollResult left = queued(0);
  INFO(left.last.Describe());
  CHECK(left.met);
}

TEST_CASE("a backend crash mid-stream ends the stream with an error event",
          "[integration][front]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" +
                          FakeModelYaml("cr-m", port, "--crash-after 2 --tokens-per-second 50"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  REQUIRE(HttpPost(url, "/v1/chat/completions", ChatBody("cr-m", false)).status == 200);
  StreamedReply crashed = StreamPost(url, "/v1/chat/completions", ChatBody("cr-m", true, 50));
  CHECK(crashed.status == 200);
  CHECK_THAT(crashed.body, Catch::Contains("data: {\"error\""));
  CHECK_THAT(crashed.body, Catch::Contains("cr-m"));
  // The next request starts the model again.
  HttpReply after =
      HttpPost(url, "/v1/chat/completions", ChatBody("cr-m", false), "application/json", 60s);
  CHECK(after.status == 200);
  // A non-streamed request that crashes gets a 502 JSON error, never an empty one.
  HttpReply ok2 =
      HttpPost(url, "/v1/chat/completions", ChatBody("cr-m", false, 50), "application/json", 60s);
  CHECK(ok2.status == 502);
  CHECK_THAT(ErrorMessage(ok2.body), Catch::Contains("cr-m"));
  CHECK_THAT(ErrorMessage(ok2.body), Catch::Contains("backend exited"));
  CHECK_THAT(ErrorMessage(ok2.body), Catch::Contains("exited unexpectedly"));
}

TEST_CASE("a request right after the backend died starts it again instead of failing",
          "[integration][front]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("rd-m", port));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  for (bool stream : {false, true}) {
    REQUIRE(HttpPost(url, "/v1/chat/completions", ChatBody("rd-m", false)).status == 200);
    std::vector<int> pids = PidsWithArg("--model rd-m ");
    REQUIRE(pids.size() == 1);
    REQUIRE(::kill(pids[0], SIGKILL) == 0);
    // Once the dead process's sockets are all closed (its listener closes first, the connection
    // swapd keeps alive to it may close later: a request sent in between gets a reset, which is
    // the backend failing under it). If swapd has not noticed the exit yet, the connection is
    // refused and the model is started again; if it has, the model is started again at once.
    auto until = std::chrono::steady_clock::now() + 30s;
    while (!ProcessGone(pids[0]) && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(1ms);
    }
    StreamedReply r = StreamPost(url, "/v1/chat/completions", ChatBody("rd-m", stream));
    CHECK(r.status == 200);
    CHECK_THAT(r.body, !Catch::Contains("\"error\""));
    std::vector<int> now = PidsWithArg("--model rd-m ");
    CHECK(now.size() == 1);
    CHECK(now != pids);
  }
}

TEST_CASE("a backend that fails to start gives 502 with exit status and log tail",
          "[integration][front]") {
  int port = FreeLoopbackPort();
  auto swapd =
      StartSwapd("models:\n" +
                 FakeModelYaml("sf-m", port, "--log-lines 3 --load-ms 200 --exit-during-load 7"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  HttpReply r =
      HttpPost(url, "/v1/chat/completions", ChatBody("sf-m", false), "application/json", 60s);
  CHECK(r.status == 502);
  std::string message = ErrorMessage(r.body);
  CHECK_THAT(message, Catch::Contains("7"));
  CHECK_THAT(message, Catch::Contains("sf-m"));
  // swapd itself is fine.
  CHECK(HttpGet(url, "/health").status == 200);
}

TEST_CASE("SIGKILL of swapd leaves no backend or grandchild behind", "[integration][front]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("kill-m", port, "--spawn-grandchild"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  REQUIRE(HttpPost(url, "/v1/completions", R"({"model":"kill-m","prompt":"x"})").status == 200);
  auto backend = PidsWithArg("--model kill-m ");
  REQUIRE(!backend.empty());  // the backend and its grandchild (same command line)
  // Only swapd itself is killed, not its process group.
  REQUIRE(kill(swapd.value().process->pid(), SIGKILL) == 0);
  REQUIRE(swapd.value().process->WaitForExit(std::chrono::seconds(10)));
  CHECK(NoneWithArgWithin("--model kill-m "));
}

}  // namespace
}  // namespace swapd::testing
