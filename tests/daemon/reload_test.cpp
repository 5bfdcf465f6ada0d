// Integration tests of reload and graceful shutdown with the real swapd and real fake backends:
// POST /api/config/reload, SIGHUP and --watch-config apply an edited config without touching
// unchanged models; a bad config changes nothing; SIGTERM drains in-flight requests.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/http_wait.h"
#include "tests/support/latch.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// The pid /running reports for a model, 0 when it does not run.
int RunningPid(const std::string& url, const std::string& model) {
  HttpReply r = HttpGet(url, "/running");
  if (r.status != 200) return 0;
  const json doc = json::parse(r.body);
  for (const auto& m : doc["running"]) {
    if (m["model"] == model && m["state"] == "ready") return m["pid"].get<int>();
  }
  return 0;
}

std::string DuoYaml(int pa, int pb, const std::string& b_flags) {
  return "models:\n" + FakeModelYaml("rl-a", pa, "--tokens-per-second 20") +
         FakeModelYaml("rl-b", pb, "--tokens-per-second 20 " + b_flags) +
         "groups:\n  duo:\n    swap: false\n    members: [rl-a, rl-b]\n";
}

// Streams a chat completion of `tokens` tokens; raises `started` on the first chunk.
std::future<StreamedReply> StreamAsync(const std::string& url, const std::string& model, int tokens,
                                       Latch& started) {
  return std::async(std::launch::async, [&url, model, tokens, &started] {
    return StreamPost(url, "/v1/chat/completions", ChatBody(model, true, tokens),
                      [&](const std::string&) {
                        started.Raise();
                        return true;
                      });
  });
}

void CheckCompleteStream(const StreamedReply& reply) {
  CHECK(reply.status == 200);
  CHECK(reply.error.empty());
  CHECK_THAT(reply.body, Catch::Contains("data: [DONE]"));
  CHECK_THAT(reply.body, !Catch::Contains("\"error\""));
}

TEST_CASE("reload keeps an unchanged model serving and restarts a changed one after its request",
          "[integration][reload]") {
  int pa = FreeLoopbackPort(), pb = FreeLoopbackPort();
  auto swapd = StartSwapd(DuoYaml(pa, pb, ""));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  REQUIRE(HttpPost(url, "/v1/chat/completions", ChatBody("rl-a", false)).status == 200);
  REQUIRE(HttpPost(url, "/v1/chat/completions", ChatBody("rl-b", false)).status == 200);
  const int pid_a = RunningPid(url, "rl-a"), pid_b = RunningPid(url, "rl-b");
  REQUIRE(pid_a > 0);
  REQUIRE(pid_b > 0);

  // A stream through each model; the reload happens while both run (40 tokens at 20/s).
  Latch a_started, b_started;
  auto a = StreamAsync(url, "rl-a", 40, a_started);
  auto b = StreamAsync(url, "rl-b", 40, b_started);
  REQUIRE(a_started.Wait(60s));
  REQUIRE(b_started.Wait(60s));
  REQUIRE(RewriteConfig(swapd.value(), DuoYaml(pa, pb, "--ctx-size 4096")));
  HttpReply reload = HttpPost(url, "/api/config/reload", "");
  REQUIRE(reload.status == 200);
  json outcome = json::parse(reload.body);
  CHECK(outcome["changed"] == json::array({"rl-b"}));
  CHECK(outcome["unchanged"] == json::array({"rl-a"}));
  // rl-b's old process keeps serving its stream until it ends.
  CHECK(RunningPid(url, "rl-a") == pid_a);
  CHECK(::kill(pid_b, 0) == 0);

  CheckCompleteStream(a.get());
  CheckCompleteStream(b.get());
  // Then rl-b restarts with the new command line; rl-a never stopped.
  REQUIRE(HttpPost(url, "/v1/chat/completions", ChatBody("rl-b", false), "application/json", 60s)
              .status == 200);
  CHECK(RunningPid(url, "rl-a") == pid_a);
  const int new_pid_b = RunningPid(url, "rl-b");
  CHECK(new_pid_b > 0);
  CHECK(new_pid_b != pid_b);
  CHECK_FALSE(PidsWithArg("--model rl-b --tokens-per-second 20 --ctx-size 4096").empty());
}

TEST_CASE("an invalid config is rejected with its position and the old one keeps serving",
          "[integration][reload]") {
  int port = FreeLoopbackPort();
  const std::string good = "models:\n" + FakeModelYaml("rl-keep", port);
  auto swapd = StartSwapd(good);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  REQUIRE(HttpPost(url, "/v1/chat/completions", ChatBody("rl-keep", false)).status == 200);
  const int pid = RunningPid(url, "rl-keep");

  REQUIRE(RewriteConfig(swapd.value(), good + "  rl-bad:\n    cmd: srv --port ${NOPE}\n"));
  HttpReply reload = HttpPost(url, "/api/config/reload", "");
  REQUIRE(reload.status == 400);
  json body = json::parse(reload.body);
  CHECK(body["error"]["type"] == "invalid_request_error");
  bool named = false;
  for (const auto& d : body["error"]["diagnostics"]) {
    if (d["message"].get<std::string>().find("NOPE") == std::string::npos) continue;
    named = true;
    CHECK(d["severity"] == "error");
    CHECK(d["line"].get<int>() == 6);  // the cmd line of rl-bad
    CHECK(d["column"].get<int>() > 0);
  }
  CHECK(named);

  // The same through SIGHUP: logged with file:line:col, nothing changes.
  REQUIRE(swapd.value().process->Signal(SIGHUP));
  CHECK(swapd.value().process->WaitForLineMatching(
      [](std::string_view line) {
        return line.find("config.yaml:") != std::string_view::npos &&
               line.find("NOPE") != std::string_view::npos;
      },
      30s));
  CHECK(swapd.value().process->WaitForLineMatching(
      [](std::string_view line) {
        return line.find("SIGHUP: the new configuration has errors") != std::string_view::npos;
      },
      30s));
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("rl-keep", false)).status == 200);
  CHECK(RunningPid(url, "rl-keep") == pid);
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("rl-bad", false)).status == 404);
}

TEST_CASE("SIGHUP adds and removes models; a removed model stops", "[integration][reload]") {
  int p1 = FreeLoopbackPort(), p2 = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("rl-old", p1));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  REQUIRE(HttpPost(url, "/v1/chat/completions", ChatBody("rl-old", false)).status == 200);
  REQUIRE_FALSE(PidsWithArg("--model rl-old ").empty());

  REQUIRE(RewriteConfig(swapd.value(), "models:\n" + FakeModelYaml("rl-new", p2)));
  REQUIRE(swapd.value().process->Signal(SIGHUP));
  PollResult listed = PollUntil(
      url, "/v1/models",
      [](const HttpReply& r) { return r.body.find("rl-new") != std::string::npos; }, 30s);
  REQUIRE(listed.met);
  CHECK(listed.last.body.find("rl-old") == std::string::npos);
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("rl-old", false)).status == 404);
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("rl-new", false)).status == 200);
  CHECK(NoneWithArgWithin("--model rl-old ", 30s));
}

TEST_CASE("--watch-config applies an editor's atomic save", "[integration][reload]") {
  int p1 = FreeLoopbackPort(), p2 = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("rw-first", p1), {"--watch-config"});
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  REQUIRE(RewriteConfig(
      swapd.value(), "models:\n" + FakeModelYaml("rw-first", p1) + FakeModelYaml("rw-second", p2)));
  PollResult listed = PollUntil(
      url, "/v1/models",
      [](const HttpReply& r) { return r.body.find("rw-second") != std::string::npos; }, 30s);
  CHECK(listed.met);
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("rw-second", false)).status == 200);
}

TEST_CASE("SIGTERM lets an in-flight stream finish, refuses new requests, exits 0",
          "[integration][reload]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("sd-m", port, "--tokens-per-second 20"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  Subprocess& process = *swapd.value().process;
  INFO(process.Output());
  Latch started;
  auto stream = StreamAsync(url, "sd-m", 40, started);
  REQUIRE(started.Wait(60s));
  REQUIRE(process.Signal(SIGTERM));
  REQUIRE(process.WaitForLineMatching(
      [](std::string_view line) { return line.find("shutting down") != std::string_view::npos; },
      30s));
  // No new request is served (the listening socket is closed, or 503 while it closes).
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("sd-m", false)).status != 200);
  CheckCompleteStream(stream.get());
  auto exit = process.WaitForExit(60s);
  REQUIRE(exit);
  CHECK(exit->ExitedWith(0));
  CHECK(NoneWithArgWithin("--model sd-m "));
}

TEST_CASE("a stream that outlasts --shutdown-timeout is ended and swapd still exits 0",
          "[integration][reload]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("sd-long", port, "--tokens-per-second 5"),
                          {"--shutdown-timeout", "1"});
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  Subprocess& process = *swapd.value().process;
  INFO(process.Output());
  Latch started;
  auto stream = StreamAsync(url, "sd-long", 2000, started);  // 400 s at 5 tokens/s
  REQUIRE(started.Wait(60s));
  REQUIRE(process.Signal(SIGTERM));
  auto exit = process.WaitForExit(60s);
  REQUIRE(exit);
  CHECK(exit->ExitedWith(0));
  StreamedReply reply = stream.get();
  CHECK(reply.status == 200);
  CHECK_THAT(reply.body, !Catch::Contains("data: [DONE]"));
  CHECK(PidsWithArg("--model sd-long ").empty());
}

}  // namespace
}  // namespace swapd::testing
