// Integration tests of the model-server gauges on /metrics (observe/model_server_gauges.h), the
// names Kubernetes' endpoint picker reads, through the real swapd and fake backends: an idle node,
// a model loading, a request queued behind a swap, one running; the resident list after swaps
// (groups and budgets) and after a ttl; scrapes at 20 Hz that leave a short ttl alone and write
// no activity. Every wait is on a condition, with a generous deadline.
#include <catch2/catch.hpp>
#include <future>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/support/http_wait.h"
#include "tests/support/latch.h"
#include "tests/support/promtool.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;

// What vllm:lora_requests_info says, and the three gauges beside it.
struct Gauges {
  bool found = false;
  std::string running;  // running_lora_adapters
  std::string waiting;  // waiting_lora_adapters
  int max_lora = -1;
  double sample_time = 0;
  double num_waiting = -1;
  double num_running = -1;
  double kv_usage = -1;

  std::string Describe() const {
    return "running=[" + running + "] waiting=[" + waiting +
           "] max_lora=" + std::to_string(max_lora) +
           " num_waiting=" + std::to_string(num_waiting) +
           " num_running=" + std::to_string(num_running) + " kv=" + std::to_string(kv_usage);
  }
};

Gauges Parse(const std::string& text) {
  Gauges g;
  static const std::regex info(
      "\nvllm:lora_requests_info\\{max_lora=\"([0-9]+)\",running_lora_adapters=\"([^\"]*)\","
      "waiting_lora_adapters=\"([^\"]*)\"\\} ([0-9.e+]+)\n");
  std::smatch m;
  if (!std::regex_search(text, m, info)) return g;
  g.found = true;
  g.max_lora = std::stoi(m[1]);
  g.running = m[2];
  g.waiting = m[3];
  g.sample_time = std::stod(m[4]);
  g.num_waiting = MetricSample(text, "vllm:num_requests_waiting");
  g.num_running = MetricSample(text, "vllm:num_requests_running");
  g.kv_usage = MetricSample(text, "vllm:kv_cache_usage_perc");
  return g;
}

// Scrapes /metrics every 50 ms (the picker's default) until `done` holds for its gauges.
Gauges ScrapeUntil(const std::string& url, const std::function<bool(const Gauges&)>& done,
                   std::chrono::milliseconds deadline = 30s) {
  PollResult r = PollUntil(
      url, "/metrics", [&](const HttpReply& reply) { return done(Parse(reply.body)); }, deadline,
      50ms);
  const Gauges g = Parse(r.last.body);
  INFO("last scrape: " << g.Describe());
  REQUIRE(r.met);
  return g;
}

TEST_CASE("gauges: idle, loading, queued behind a swap, running, swapped, after a ttl",
          "[integration][gateway]") {
  // Ungrouped: they swap, one at a time. slow-a streams at 20 tokens/s; b loads for 1.5 s and
  // idles out after 2 s.
  const int pa = FreeLoopbackPort(), pb = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("slow-a", pa, "--tokens-per-second 20") +
                          FakeModelYaml("load-b", pb, "--load-ms 1500", "    ttl: 2\n"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  // Idle: nothing resident, nothing waits; one model may be resident at a time.
  HttpReply idle = HttpGet(url, "/metrics");
  REQUIRE(idle.status == 200);
  Gauges g = Parse(idle.body);
  INFO(g.Describe());
  REQUIRE(g.found);
  CHECK(g.running.empty());
  CHECK(g.waiting.empty());
  CHECK(g.max_lora == 1);
  CHECK(g.num_waiting == 0);
  CHECK(g.num_running == 0);
  CHECK(g.kv_usage == 0);
  CHECK(g.sample_time > 1.7e9);
  CHECK(PromtoolProblems(idle.body).empty());

  // Loading: a request for load-b waits while it starts.
  auto first_b = std::async(std::launch::async, [&] { return ChatStatus(url, "load-b"); });
  g = ScrapeUntil(url, [](const Gauges& s) { return s.waiting == "load-b"; });
  CHECK(g.num_waiting == 1);
  CHECK(g.running.empty());
  REQUIRE(first_b.get() == 200);
  g = ScrapeUntil(url, [](const Gauges& s) { return s.running == "load-b"; });
  CHECK(g.waiting.empty());
  CHECK(g.num_waiting == 0);
  CHECK(g.kv_usage == 1);  // no budget: 1 of max_lora 1 resident

  // Running: a slow stream of slow-a (swapping load-b out) holds one request in flight until the
  // checks are done.
  Latch checked;
  auto stream = std::async(std::launch::async, [&] {
    return StreamPost(url, "/v1/chat/completions", ChatBody("slow-a", true, 400),
                      [&](const std::string&) { return !checked.Wait(60s); });
  });
  g = ScrapeUntil(url, [](const Gauges& s) { return s.num_running == 1; });
  CHECK(g.running == "slow-a");
  CHECK(g.num_waiting == 0);

  // Queued: load-b must wait for slow-a's request to finish before the swap.
  auto second_b = std::async(std::launch::async, [&] { return ChatStatus(url, "load-b"); });
  g = ScrapeUntil(url, [](const Gauges& s) { return s.num_waiting == 1; });
  CHECK(g.running == "slow-a");
  CHECK(g.waiting == "load-b");
  CHECK(g.num_running == 1);
  checked.Raise();  // the client hangs up: the swap goes on
  stream.get();
  REQUIRE(second_b.get() == 200);
  g = ScrapeUntil(url, [](const Gauges& s) { return s.running == "load-b"; });
  CHECK(g.waiting.empty());
  CHECK(g.num_waiting == 0);

  // load-b idles out after its ttl: it leaves the running list as it starts stopping, and counts
  // as using its place until its process is gone.
  g = ScrapeUntil(url, [](const Gauges& s) { return s.running.empty(); });
  CHECK(g.waiting.empty());
  g = ScrapeUntil(url, [](const Gauges& s) { return s.kv_usage == 0; });
  CHECK(g.running.empty());
  CHECK(g.waiting.empty());
}

TEST_CASE("gauges: the resident models under a memory budget, after swaps",
          "[integration][gateway]") {
  // 10 GiB for models of 4 GiB each: two fit together, the third evicts the least recently used.
  const std::string four = "    memory: {ram: 4GiB}\n";
  auto swapd = StartSwapd("memory:\n  ram: 10GiB\n  sampleInterval: 0\nmodels:\n" +
                          FakeModelYaml("bud-a", FreeLoopbackPort(), "", four) +
                          FakeModelYaml("bud-b", FreeLoopbackPort(), "", four) +
                          FakeModelYaml("bud-c", FreeLoopbackPort(), "", four));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  Gauges g = Parse(HttpGet(url, "/metrics").body);
  CHECK(g.max_lora == 2);
  CHECK(g.kv_usage == 0);

  REQUIRE(ChatStatus(url, "bud-a") == 200);
  REQUIRE(ChatStatus(url, "bud-b") == 200);
  g = ScrapeUntil(url, [](const Gauges& s) { return s.running == "bud-a,bud-b"; });
  CHECK(g.kv_usage == Approx(0.8));
  REQUIRE(ChatStatus(url, "bud-c") == 200);
  g = ScrapeUntil(url, [](const Gauges& s) { return s.running == "bud-b,bud-c"; });
  CHECK(g.max_lora == 2);
  CHECK(g.waiting.empty());
}

TEST_CASE(
    "gauges: scrapes at 20 Hz neither keep a model with a short ttl alive nor count as "
    "activity",
    "[integration][gateway]") {
  auto swapd =
      StartSwapd("models:\n" + FakeModelYaml("short-ttl", FreeLoopbackPort(), "", "    ttl: 2\n"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  REQUIRE(ChatStatus(url, "short-ttl") == 200);
  // Scraped every 50 ms from here on: it still idles out after its 2 s (well before the deadline,
  // which only bounds a failure), stopped for its ttl.
  Gauges g = ScrapeUntil(
      url, [](const Gauges& s) { return s.found && s.running.empty(); }, 20s);
  CHECK(g.waiting.empty());
  const std::string metrics = HttpGet(url, "/metrics").body;
  CHECK(MetricSample(metrics, "swapd_model_stops_total{model=\"short-ttl\",reason=\"ttl\"}") == 1);
  CHECK(MetricSample(metrics, "swapd_model_starts_total{model=\"short-ttl\"}") == 1);
  // The activity history holds the one chat, none of the scrapes.
  PollResult activity = PollUntil(
      url, "/api/metrics/activity",
      [](const HttpReply& r) {
        auto doc = nlohmann::json::parse(r.body, nullptr, false);
        return doc.is_object() && doc.value("total", 0) >= 1;
      },
      20s, 50ms);
  INFO(activity.last.Describe());
  REQUIRE(activity.met);
  CHECK(nlohmann::json::parse(activity.last.body)["total"] == 1);
}

}  // namespace
}  // namespace swapd::testing
