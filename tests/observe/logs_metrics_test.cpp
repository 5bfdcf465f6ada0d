// Tests of the logs and metrics: LogHub on its own (bounded history, live subscribers, drops,
// per-model filter) and Metrics' text; then the real swapd with fake backends: GET /logs,
// /logs/stream/{model}, /metrics checked by promtool, and GET /api/models.
#include <httplib.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "base/wake_fd.h"
#include "observe/log_hub.h"
#include "observe/metrics.h"
#include "tests/support/http_wait.h"
#include "tests/support/latch.h"
#include "tests/support/promtool.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::string Joined(const std::vector<LogLine>& lines) { return FormatLogLines(lines); }

TEST_CASE("LogHub keeps a bounded history, by lines and by bytes", "[unit][obs][logs]") {
  LogHub by_lines(LogHubLimits{3, 1 << 20, 10});
  for (int i = 1; i <= 5; ++i) by_lines.Append("m", "line " + std::to_string(i));
  CHECK(Joined(by_lines.History()) == "[m] line 3\n[m] line 4\n[m] line 5\n");

  LogHub by_bytes(LogHubLimits{100, 10, 10});
  by_bytes.Append("swapd", "12345");
  by_bytes.Append("swapd", "67890");
  by_bytes.Append("swapd", "abc");
  CHECK(Joined(by_bytes.History()) == "[swapd] 67890\n[swapd] abc\n");
}

TEST_CASE("LogHub filters by source and gives a tail", "[unit][obs][logs]") {
  LogHub hub;
  hub.Append("a", "a1");
  hub.Append("swapd", "s1");
  hub.Append("a", "a2");
  hub.Append("b", "b1");
  hub.Append("a", "a3");
  CHECK(Joined(hub.History("a")) == "[a] a1\n[a] a2\n[a] a3\n");
  CHECK(Joined(hub.Tail("a", 2)) == "[a] a2\n[a] a3\n");
  CHECK(hub.History().size() == 5);
  CHECK(hub.History("nobody").empty());
}

TEST_CASE("A LogHub subscriber gets the history, then live lines of its source",
          "[unit][obs][logs]") {
  LogHub hub;
  hub.Append("a", "old a");
  hub.Append("b", "old b");
  auto all = hub.Subscribe("", true);
  auto only_a = hub.Subscribe("a", true);
  auto live_only = hub.Subscribe("", false);
  CHECK(Joined(all->Next(1s)) == "[a] old a\n[b] old b\n");
  CHECK(Joined(only_a->Next(1s)) == "[a] old a\n");
  CHECK(live_only->Next(10ms).empty());  // no history asked for, nothing new yet

  // A line appended by another thread while the subscriber waits wakes it.
  std::thread writer([&] { hub.Append("a", "new a"); });
  std::vector<LogLine> got;
  for (auto deadline = std::chrono::steady_clock::now() + 10s;
       got.empty() && std::chrono::steady_clock::now() < deadline;) {
    got = live_only->Next(100ms);
  }
  writer.join();
  CHECK(Joined(got) == "[a] new a\n");
  hub.Append("b", "new b");
  CHECK(Joined(all->Next(1s)) == "[a] new a\n[b] new b\n");
  CHECK(Joined(only_a->Next(1s)) == "[a] new a\n");
  CHECK(only_a->Next(10ms).empty());  // "new b" is not for it
}

TEST_CASE("A LogHub subscription's fd is readable while its lines wait, and for good once closed",
          "[unit][obs][logs]") {
  LogHub hub;
  hub.Append("a", "old a");
  auto with_history = hub.Subscribe("a", true);
  CHECK(WaitReadable(with_history->fd(), 0ms));  // its history waits
  auto live = hub.Subscribe("a", false);
  REQUIRE(live->fd() >= 0);
  CHECK_FALSE(WaitReadable(live->fd(), 0ms));
  hub.Append("b", "not for it");
  CHECK_FALSE(WaitReadable(live->fd(), 0ms));
  hub.Append("a", "one");
  hub.Append("a", "two");
  CHECK(WaitReadable(live->fd(), 0ms));
  CHECK(Joined(live->Next(0ms)) == "[a] one\n[a] two\n");
  CHECK_FALSE(WaitReadable(live->fd(), 0ms));  // taken: quiet again

  hub.Close();
  CHECK(WaitReadable(live->fd(), 0ms));
  CHECK(live->Next(0ms).empty());
  CHECK(WaitReadable(live->fd(), 0ms));  // stays readable: every later wait ends at once
  CHECK(WaitReadable(hub.Subscribe("", false)->fd(), 0ms));
  hub.Append("a", "after");  // lines are still kept
  CHECK(Joined(live->Next(0ms)) == "[a] after\n");
}

TEST_CASE("A slow LogHub subscriber loses lines and is told how many", "[unit][obs][logs]") {
  LogHub hub(LogHubLimits{100, 1 << 20, 3});
  auto slow = hub.Subscribe("", false);
  for (int i = 1; i <= 10; ++i) hub.Append("m", std::to_string(i));
  std::vector<LogLine> got = slow->Next(1s);
  REQUIRE(got.size() == 4);
  CHECK(Joined({got[0], got[1], got[2]}) == "[m] 1\n[m] 2\n[m] 3\n");
  CHECK(got[3].source == "swapd");
  CHECK_THAT(got[3].text, Catch::Contains("7 lines dropped"));
  hub.Append("m", "11");
  CHECK(Joined(slow->Next(1s)) == "[m] 11\n");  // the queue is usable again
  CHECK(hub.History().size() == 11);            // the history is not affected

  // A large history does not count against the live bound.
  auto late = hub.Subscribe("m", true);
  hub.Append("m", "12");
  std::vector<LogLine> first = late->Next(1s);
  REQUIRE(first.size() == 12);
  CHECK(first.back().text == "12");
}

TEST_CASE("Metrics count model lives and requests by route", "[unit][obs]") {
  Metrics metrics;
  RouterEvents events = metrics.RouterHooks();
  events.on_start("m");
  events.on_start_finished("m", true, 1500ms);
  events.on_start("m");
  events.on_start_finished("m", false, 200ms);
  events.on_crash("m");
  events.on_stop("m", "group");
  events.on_stop("m", "ttl");
  metrics.CountRequest("m", "/v1/chat/completions", 200);
  metrics.CountRequest("m", "/v1/chat/completions", 503);
  ModelCounters c = metrics.Counters("m");
  CHECK(c.starts == 2);
  CHECK(c.start_failures == 1);
  CHECK(c.crashes == 1);
  const std::string text = metrics.RenderPrometheus({});
  CHECK_THAT(text, Catch::Contains("swapd_model_swaps_total{model=\"m\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("swapd_model_stops_total{model=\"m\",reason=\"ttl\"} 1\n"));
  CHECK_THAT(text, Catch::Contains(
                       "swapd_model_load_duration_seconds_bucket{model=\"m\",le=\"2.5\"} 1\n"));
  CHECK_THAT(text,
             Catch::Contains("swapd_model_load_duration_seconds_bucket{model=\"m\",le=\"1\"} 0\n"));
  CHECK_THAT(text,
             Catch::Contains("swapd_requests_total{model=\"m\",route=\"/v1/chat/completions\","
                             "status=\"5xx\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("swapd_build_info{version=\""));
}

// ---- Integration

TEST_CASE("GET /logs has backend output and swapd's own lines", "[integration][obs][logs]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("obs-a", port, "--log-lines 3"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  HttpReply chat =
      HttpPost(url, "/v1/chat/completions", ChatBody("obs-a", false), "application/json", 30s);
  INFO(chat.Describe());
  REQUIRE(chat.status == 200);
  PollResult logs = PollUntil(
      url, "/logs",
      [](const HttpReply& r) {
        return r.body.find("[obs-a] llama_model_loader: - kv 2") != std::string::npos &&
               r.body.find("[swapd] ") != std::string::npos &&
               r.body.find("model obs-a: ready in") != std::string::npos;
      },
      20s, 50ms);
  INFO(logs.last.Describe());
  CHECK(logs.met);
  CHECK_THAT(logs.last.content_type, Catch::StartsWith("text/plain"));

  HttpReply unknown = HttpGet(url, "/logs/stream/no-such-model");
  CHECK(unknown.status == 404);
  CHECK_THAT(unknown.body, Catch::Contains("\"error\""));
}

TEST_CASE("GET /logs/stream/{model} delivers the model's lines live", "[integration][obs][logs]") {
  int pa = FreeLoopbackPort(), pb = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("obs-a", pa, "--log-lines 2") +
                          FakeModelYaml("obs-b", pb, "--log-lines 2"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;

  // The stream is open (subscribed) once its headers arrive; only then start the model.
  Latch opened;
  std::mutex mu;
  std::string received;
  auto stream = std::async(std::launch::async, [&] {
    httplib::Client client(url);
    client.set_read_timeout(30, 0);
    return client.Get(
        "/logs/stream/obs-b",
        [&](const httplib::Response& r) {
          opened.Raise();
          return r.status == 200;
        },
        [&](const char* data, size_t n) {
          std::lock_guard lock(mu);
          received.append(data, n);
          // Hang up once the model's start-up line came.
          return received.find("kv 1") == std::string::npos;
        });
  });
  REQUIRE(opened.Wait(20s));
  HttpReply a =
      HttpPost(url, "/v1/chat/completions", ChatBody("obs-a", false), "application/json", 30s);
  HttpReply b =
      HttpPost(url, "/v1/chat/completions", ChatBody("obs-b", false), "application/json", 30s);
  CHECK(a.status == 200);
  CHECK(b.status == 200);
  REQUIRE(stream.wait_for(30s) == std::future_status::ready);
  std::lock_guard lock(mu);
  INFO(received);
  CHECK_THAT(received, Catch::Contains("[obs-b] llama_model_loader: - kv 1"));
  CHECK(received.find("[obs-a]") == std::string::npos);
  CHECK(received.find("[swapd]") == std::string::npos);
}

TEST_CASE("An open log stream ends when swapd shuts down", "[integration][obs][logs]") {
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("obs-a", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  Latch opened;
  auto stream = std::async(std::launch::async, [&] {
    httplib::Client client(url);
    client.set_read_timeout(60, 0);
    return client.Get(
        "/logs/stream?no-history",
        [&](const httplib::Response&) {
          opened.Raise();
          return true;
        },
        [&](const char*, size_t) { return true; });
  });
  REQUIRE(opened.Wait(20s));
  REQUIRE(swapd.value().process->Signal(SIGTERM));
  auto exited = swapd.value().process->WaitForExit(20s);
  INFO(swapd.value().process->Output());
  REQUIRE(exited.has_value());
  CHECK(exited->ExitedWith(0));
  CHECK(stream.wait_for(20s) == std::future_status::ready);
}

TEST_CASE("GET /metrics passes promtool and counts a streamed request", "[integration][obs]") {
  int pa = FreeLoopbackPort(), pb = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("obs-a", pa) + FakeModelYaml("obs-b", pb));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  StreamedReply reply = StreamPost(url, "/v1/chat/completions", ChatBody("obs-a", true, 7));
  INFO(reply.body);
  REQUIRE(reply.status == 200);
  std::smatch usage;
  const std::regex completion_tokens("\"completion_tokens\":([0-9]+)");
  REQUIRE(std::regex_search(reply.body, usage, completion_tokens));
  const double expected = std::stod(usage[1]);
  REQUIRE(expected > 0);

  // The proxy records the request as its exchange ends, a moment after the client's last chunk.
  const std::string tokens = "swapd_completion_tokens_total{model=\"obs-a\"}";
  PollResult counted = PollUntil(
      url, "/metrics", [&](const HttpReply& r) { return MetricSample(r.body, tokens) == expected; },
      20s, 50ms);
  INFO(counted.last.Describe());
  CHECK(counted.met);
  // obs-b in the same (default) group: obs-a is swapped out.
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("obs-b", false), "application/json", 30s)
            .status == 200);
  HttpReply metrics = HttpGet(url, "/metrics");
  REQUIRE(metrics.status == 200);
  const std::string& m = metrics.body;
  INFO(m);
  CHECK(MetricSample(m,
                     "swapd_requests_total{model=\"obs-a\",route=\"/v1/chat/completions\","
                     "status=\"2xx\"}") == 1);
  CHECK(MetricSample(m, "swapd_model_starts_total{model=\"obs-a\"}") == 1);
  CHECK(MetricSample(m, "swapd_model_swaps_total{model=\"obs-a\"}") == 1);
  CHECK(MetricSample(m, "swapd_model_load_duration_seconds_count{model=\"obs-b\"}") == 1);
  CHECK(MetricSample(m, "swapd_backend_resident_memory_bytes{model=\"obs-b\"}") > 0);
  CHECK(MetricSample(m, "swapd_model_state{model=\"obs-b\",state=\"ready\"}") == 1);
  CHECK_THAT(m, Catch::Contains("swapd_build_info{version=\""));
  // GET /api/version says the same version, with the commit and build date.
  HttpReply version = HttpGet(url, "/api/version");
  REQUIRE(version.status == 200);
  const nlohmann::json v = nlohmann::json::parse(version.body);
  CHECK_THAT(
      m, Catch::Contains("swapd_build_info{version=\"" + v["version"].get<std::string>() + "\"}"));
  CHECK_FALSE(v["commit"].get<std::string>().empty());
  CHECK(v["build_date"].get<std::string>().size() == 20);  // 2026-12-05T19:44:00Z

  CHECK(PromtoolProblems(m).empty());
}

TEST_CASE("GET /api/models describes every configured model", "[integration][obs]") {
  int pa = FreeLoopbackPort(), pb = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("obs-a", pa, "--log-lines 3") +
                          FakeModelYaml("obs-b", pb));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  REQUIRE(StreamPost(url, "/v1/chat/completions", ChatBody("obs-a", true, 5)).status == 200);
  // The proxy records tokens/s as the exchange ends, a moment after the client's last chunk.
  PollResult measured = PollUntil(
      url, "/api/models",
      [](const HttpReply& r) {
        auto doc = json::parse(r.body, nullptr, false);
        if (!doc.is_object()) return false;
        for (const auto& m : doc["models"]) {
          if (m["id"] == "obs-a") return m["generation_tokens_per_second"].get<double>() > 0;
        }
        return false;
      },
      20s, 50ms);
  INFO(measured.last.Describe());
  REQUIRE(measured.met);
  const json doc = json::parse(measured.last.body);
  REQUIRE(doc["models"].size() == 2);
  const json& a = doc["models"][0];
  const json& b = doc["models"][1];
  CHECK(a["id"] == "obs-a");
  CHECK(a["state"] == "ready");
  CHECK(a["pid"].get<int>() > 0);
  CHECK(a["uptime_seconds"].get<double>() >= 0);
  CHECK(a["last_error"].is_string());
  REQUIRE(a["last_log_lines"].is_array());
  CHECK(a["last_log_lines"].size() >= 3);
  CHECK(a["in_flight"] == 0);
  CHECK(a["queued"] == 0);
  CHECK(a["prompt_tokens_per_second"].is_number());
  CHECK(a["starts"] == 1);
  CHECK(a["start_failures"] == 0);
  CHECK(a["crashes"] == 0);
  CHECK(b["id"] == "obs-b");
  CHECK(b["state"] == "stopped");
  CHECK(b["pid"] == 0);
  CHECK(b["starts"] == 0);
  CHECK(b["last_log_lines"].empty());
}

}  // namespace
}  // namespace swapd::testing
