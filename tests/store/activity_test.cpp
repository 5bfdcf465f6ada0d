// Tests of the request history: RFC 3339 times, the speed histogram, ActivityStore's queries
// (filters, sort, pages, totals, pruning) on an in-memory database; then the real swapd with fake
// backends: GET /api/metrics/activity and /api/metrics/stats as llama-swap answers them, a refused
// request with its error, the `activity` event, the history across a restart, a corrupt database
// (kept in memory instead) and a write that fails for want of space (the request still served).
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/time_text.h"
#include "store/activity_log.h"
#include "store/activity_store.h"
#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using Catch::Matchers::WithinAbs;
using nlohmann::json;

TEST_CASE("RFC 3339 times: written in UTC, read with any offset", "[unit][activity]") {
  CHECK(Rfc3339(0) == "1970-01-01T00:00:00Z");
  CHECK(Rfc3339(1796488200) == "2026-12-05T16:30:00Z");
  CHECK(ParseRfc3339("2026-12-05T16:30:00Z") == 1796488200);
  CHECK(ParseRfc3339("2026-12-05T17:30:00+01:00") == 1796488200);
  CHECK(ParseRfc3339("2026-12-05T16:00:00.123456-00:30") == 1796488200);
  for (const char* bad :
       {"", "2026-12-05", "2026-12-05T16:30:00", "2026-13-05T16:30:00Z", "2026-12-05T16:30:00Zx",
        "2026-12-05 16:30:00Z", "2026-12-05T16:30:00+1"}) {
    INFO(bad);
    CHECK_FALSE(ParseRfc3339(bad).has_value());
  }
}

TEST_CASE("Speed histograms: Sturges' bins between min and max, interpolated percentiles",
          "[unit][activity]") {
  CHECK_FALSE(HistogramOf({}).has_value());
  auto same = HistogramOf({7, 7, 7});
  REQUIRE(same.has_value());
  CHECK(same->bins == std::vector<int64_t>{3});
  CHECK(same->bin_size == 0);
  CHECK(same->p99 == 7);

  // 10 values: ceil(log2 10) + 1 = 5 bins of (10 - 1) / 5 = 1.8; the maximum goes in the last.
  auto h = HistogramOf({10, 9, 8, 7, 6, 5, 4, 3, 2, 1});
  REQUIRE(h.has_value());
  CHECK(h->min == 1);
  CHECK(h->max == 10);
  CHECK_THAT(h->bin_size, WithinAbs(1.8, 1e-9));
  CHECK(h->bins == std::vector<int64_t>{2, 2, 2, 2, 2});
  CHECK_THAT(h->p50, WithinAbs(5.5, 1e-9));
  CHECK_THAT(h->p95, WithinAbs(9.55, 1e-9));
  CHECK_THAT(h->p99, WithinAbs(9.91, 1e-9));

  std::vector<double> many(5000, 1.0);
  many.push_back(2.0);
  CHECK(HistogramOf(many)->bins.size() == 14);  // ceil(log2 5001) + 1; at most 20
}

ActivityEntry Entry(const std::string& model, int64_t at, int64_t duration_ms, double gen_speed) {
  ActivityEntry e;
  e.model = model;
  e.timestamp = at;
  e.req_path = "/v1/chat/completions";
  e.content_type = "application/json";
  e.status = 200;
  e.duration_ms = duration_ms;
  e.tokens.input = 10;
  e.tokens.output = 5;
  e.tokens.cache = 2;
  e.tokens.tokens_per_second = gen_speed;
  return e;
}

std::vector<int64_t> Ids(const ActivityPage& page) {
  std::vector<int64_t> ids;
  for (const ActivityEntry& e : page.data) ids.push_back(e.id);
  return ids;
}

TEST_CASE("ActivityStore: filters, sort, pages and totals as llama-swap's", "[unit][activity]") {
  auto opened = ActivityStore::Open(":memory:");
  REQUIRE(opened.ok());
  ActivityStore& store = *opened.value();
  ActivityEntry odd = Entry("b", 1000, 50, 0);
  odd.status = 502;
  odd.error = "backend exited";
  odd.metadata = {{"session", "s1"}};
  auto ids = store.Insert(
      {Entry("a", 1000, 300, 20), Entry("a", 2000, 100, 40), odd, Entry("c", 3000, 200, 30)});
  REQUIRE(ids.ok());
  CHECK(ids.value() == std::vector<int64_t>{1, 2, 3, 4});

  ActivityQuery all;
  auto page = store.List(all);
  REQUIRE(page.ok());
  CHECK(Ids(page.value()) == std::vector<int64_t>{4, 3, 2, 1});  // newest first
  CHECK(page.value().total == 4);
  CHECK(page.value().total_pages == 1);
  const ActivityEntry& b = page.value().data[1];
  CHECK(b.model == "b");
  CHECK(b.status == 502);
  CHECK(b.error == "backend exited");
  CHECK(b.metadata == std::map<std::string, std::string>{{"session", "s1"}});
  CHECK(b.tokens.input == 10);

  ActivityQuery q;
  q.filter.models = {"a", "c"};
  q.sort = "duration";
  q.ascending = true;
  CHECK(Ids(store.List(q).value()) == std::vector<int64_t>{2, 4, 1});
  q = ActivityQuery();
  q.filter.start = 1500;
  q.filter.end = 2500;
  CHECK(Ids(store.List(q).value()) == std::vector<int64_t>{2});
  q = ActivityQuery();
  q.filter.min_id = 2;
  q.filter.max_id = 3;
  CHECK(Ids(store.List(q).value()) == std::vector<int64_t>{3, 2});
  q = ActivityQuery();
  q.limit = 3;
  q.page = 2;
  auto second = store.List(q);
  CHECK(Ids(second.value()) == std::vector<int64_t>{1});
  CHECK(second.value().total_pages == 2);
  q.sort = "time";  // ties broken by id, the same way
  CHECK(Ids(store.List(q).value()) == std::vector<int64_t>{1});

  auto stats = store.Stats("");
  REQUIRE(stats.ok());
  CHECK(stats.value().total_requests == 4);
  CHECK(stats.value().total_input_tokens == 40);
  CHECK(stats.value().total_output_tokens == 20);
  CHECK(stats.value().total_cache_tokens == 8);
  CHECK_FALSE(stats.value().prompt.has_value());  // no prompt speed reported
  REQUIRE(stats.value().generation.has_value());
  CHECK(stats.value().generation->min == 20);  // the 0 (not reported) is left out
  CHECK(store.Stats("a").value().total_requests == 2);

  REQUIRE(store.Prune(2).ok());
  CHECK(Ids(store.List(ActivityQuery()).value()) == std::vector<int64_t>{4, 3});
}

TEST_CASE("ActivityStore: a large batch is written many rows to a statement, ids in order",
          "[unit][activity]") {
  auto opened = ActivityStore::Open(":memory:");
  REQUIRE(opened.ok());
  ActivityStore& store = *opened.value();
  REQUIRE(store.Insert({Entry("first", 500, 1, 1)}).ok());
  std::vector<ActivityEntry> batch;
  for (int i = 0; i < 150; ++i) {  // two full statements and a shorter one
    ActivityEntry e = Entry("m" + std::to_string(i), 1000 + i, i, 0);
    if (i % 7 == 0) e.metadata = {{"row", std::to_string(i)}};
    batch.push_back(e);
  }
  auto ids = store.Insert(batch);
  REQUIRE(ids.ok());
  REQUIRE(ids.value().size() == 150);
  for (size_t i = 0; i < ids.value().size(); ++i) CHECK(ids.value()[i] == 2 + int64_t(i));
  ActivityQuery q;
  q.limit = 999;
  q.sort = "id";
  q.ascending = true;
  auto page = store.List(q);
  REQUIRE(page.ok());
  REQUIRE(page.value().data.size() == 151);
  for (int i = 0; i < 150; ++i) {
    const ActivityEntry& row = page.value().data[static_cast<size_t>(i) + 1];
    INFO(i);
    CHECK(row.id == ids.value()[static_cast<size_t>(i)]);
    CHECK(row.model == "m" + std::to_string(i));
    CHECK(row.timestamp == 1000 + i);
    CHECK(row.duration_ms == i);
    CHECK(row.metadata == batch[static_cast<size_t>(i)].metadata);
  }
}

TEST_CASE("ActivityLog writes off the caller's thread and tells the newest id of each write",
          "[unit][activity]") {
  std::mutex mu;
  std::vector<int64_t> told;
  auto store = ActivityStore::Open(":memory:");
  REQUIRE(store.ok());
  ActivityLog log(std::move(store).value(), [&](int64_t id) {
    std::lock_guard lock(mu);
    told.push_back(id);
  });
  for (int i = 0; i < 50; ++i) log.Record(Entry("m", 1000 + i, i, 1));
  log.Flush();
  std::lock_guard lock(mu);
  // Each transaction is told once, by its newest row: ids ascend and the last is the 50th.
  REQUIRE_FALSE(told.empty());
  CHECK(told.size() <= 50);
  CHECK(std::is_sorted(told.begin(), told.end()));
  CHECK(std::adjacent_find(told.begin(), told.end()) == told.end());
  CHECK(told.back() == 50);
  CHECK(log.store().List(ActivityQuery()).value().total == 50);
  CHECK(log.dropped() == 0);
  CHECK(log.failed() == 0);
}

TEST_CASE("ActivityLog keeps the newest rows", "[unit][activity]") {
  auto store = ActivityStore::Open(":memory:");
  REQUIRE(store.ok());
  constexpr int64_t kKept = 8;
  ActivityLog log(std::move(store).value(), nullptr, nullptr, kKept);
  for (int i = 0; i < 100; ++i) log.Record(Entry("m", 1000 + i, i, 1));
  log.Flush();
  const ActivityPage page = log.store().List(ActivityQuery()).value();
  // kKept, and the rows written since the last prune (it runs every kKept rows at most).
  CHECK(page.total >= kKept);
  CHECK(page.total < 2 * kKept);
  const std::vector<int64_t> ids = Ids(page);
  REQUIRE(static_cast<int64_t>(ids.size()) == page.total);
  CHECK(ids.front() == 100);  // the newest first, with none missing after the oldest kept
  CHECK(ids.back() == 100 - page.total + 1);
}

json Activity(const std::string& url, const std::string& query = "") {
  HttpReply reply = HttpGet(url, "/api/metrics/activity" + query);
  REQUIRE(reply.status == 200);
  return json::parse(reply.body);
}

std::string StoreYaml(const std::string& path) { return "store:\n  path: " + path + "\n"; }

TEST_CASE("GET /api/metrics/activity and /stats list the requests as llama-swap does",
          "[integration][activity]") {
  TempDir tmp("swapd-activity");
  int ok_port = FreeLoopbackPort(), bad_port = FreeLoopbackPort();
  auto swapd =
      StartSwapd(StoreYaml(tmp.Path("swapd.db")) + "models:\n" + FakeModelYaml("act-ok", ok_port) +
                 FakeModelYaml("act-bad", bad_port, "--exit-during-load 7"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("act-ok", false, 4), "application/json", 60s)
            .status == 200);
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("act-ok", true, 4), "application/json", 60s)
            .status == 200);
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("act-bad", false), "application/json", 60s)
            .status == 502);
  // The first row's capture is filed a moment after its row is written.
  REQUIRE(WaitFor([&] {
    json rows = Activity(url, "?sort=id&order=asc");
    return rows["total"] == 3 && rows["data"][0]["has_capture"] == true;
  }));

  json page = Activity(url, "?sort=id&order=asc");
  CHECK(page["page"] == 1);
  CHECK(page["limit"] == 25);
  CHECK(page["total_pages"] == 1);
  const json& plain = page["data"][0];
  CHECK(plain["id"] == 1);
  CHECK(plain["model"] == "act-ok");
  CHECK(plain["req_path"] == "/v1/chat/completions");
  CHECK(plain["resp_status_code"] == 200);
  CHECK_THAT(plain["resp_content_type"].get<std::string>(), Catch::StartsWith("application/json"));
  CHECK(plain["tokens"]["output_tokens"] == 4);
  CHECK(plain["tokens"]["input_tokens"].get<int>() > 0);
  CHECK(plain["tokens"]["tokens_per_second"].get<double>() > 0);
  CHECK(plain["has_capture"] == true);  // captureBuffer: 5 MB by default
  CHECK_FALSE(plain.contains("error_msg"));
  CHECK(ParseRfc3339(plain["timestamp"].get<std::string>()).has_value());
  CHECK_THAT(page["data"][1]["resp_content_type"].get<std::string>(),
             Catch::StartsWith("text/event-stream"));
  const json& refused = page["data"][2];
  CHECK(refused["model"] == "act-bad");
  CHECK(refused["resp_status_code"] == 502);
  CHECK_THAT(refused["error_msg"].get<std::string>(), Catch::Contains("exit code 7"));

  json only_bad = Activity(url, "?model=act-bad&model=nobody");
  CHECK(only_bad["total"] == 1);
  CHECK(Activity(url, "?limit=1&page=3")["data"][0]["id"] == 1);
  CHECK(Activity(url, "?sort=model&order=desc&limit=1")["data"][0]["model"] == "act-ok");
  CHECK(Activity(url, "?min_id=2&max_id=2")["total"] == 1);
  CHECK(Activity(url, "?start=2000-01-01T00:00:00Z&end=2000-01-02T00:00:00Z")["total"] == 0);
  for (const char* bad :
       {"?limit=1000", "?limit=x", "?page=0", "?sort=pid", "?order=up", "?start=yesterday",
        "?min_id=3&max_id=2", "?start=2026-01-02T00:00:00Z&end=2026-01-01T00:00:00Z"}) {
    INFO(bad);
    HttpReply reply = HttpGet(url, std::string("/api/metrics/activity") + bad);
    CHECK(reply.status == 400);
    CHECK(json::parse(reply.body)["error"]["message"].is_string());
  }

  HttpReply stats = HttpGet(url, "/api/metrics/stats");
  REQUIRE(stats.status == 200);
  json s = json::parse(stats.body);
  CHECK(s["total_requests"] == 3);
  CHECK(s["total_output_tokens"] == 8);
  REQUIRE(s["gen_histogram"].is_object());
  CHECK(s["gen_histogram"]["bins"].size() == 1);
  CHECK(s["gen_histogram"].contains("binSize"));
  CHECK(s["gen_histogram"].contains("p99"));
  CHECK(json::parse(HttpGet(url, "/api/metrics/stats?model=act-bad").body)["gen_histogram"]
            .is_null());

  // The history outlives swapd: a new one on the same database lists the same rows.
  REQUIRE(swapd.value().process->Signal(SIGTERM));
  REQUIRE(swapd.value().process->WaitForExit(30s).has_value());
  auto again =
      StartSwapd(StoreYaml(tmp.Path("swapd.db")) + "models:\n" + FakeModelYaml("act-ok", ok_port));
  REQUIRE(again.ok());
  CHECK(Activity(again.value().base_url)["total"] == 3);
}

TEST_CASE("A corrupt database: the history is kept in memory, requests are served",
          "[integration][activity]") {
  TempDir tmp("swapd-activity");
  std::ofstream(tmp.Path("swapd.db")) << std::string(8192, 'x');
  auto swapd = StartSwapd(StoreYaml(tmp.Path("swapd.db")) + "models:\n" +
                          FakeModelYaml("act-m", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  CHECK(swapd.value().process->WaitForLineMatching(
      [](std::string_view line) {
        return line.find("the request history is kept in memory") != std::string_view::npos;
      },
      20s));
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("act-m", false), "application/json", 60s)
            .status == 200);
  CHECK(WaitFor([&] { return Activity(url)["total"] == 1; }));
}

TEST_CASE("A history write that fails (no room for the file) costs no request",
          "[integration][activity]") {
  TempDir tmp("swapd-activity");
  auto swapd = StartSwapd(StoreYaml(tmp.Path("swapd.db")) + "models:\n" +
                          FakeModelYaml("act-full", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("act-full", false), "application/json", 60s)
            .status == 200);
  REQUIRE(WaitFor([&] { return Activity(url)["total"] == 1; }));

  // From now on swapd may not grow a file: the database's next write fails as on a full disk.
  rlimit one_byte{1, 1};
  REQUIRE(prlimit(swapd.value().process->pid(), RLIMIT_FSIZE, &one_byte, nullptr) == 0);
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("act-full", false), "application/json", 60s)
            .status == 200);
  CHECK(WaitFor([&] {
    return HttpGet(url, "/metrics").body.find("swapd_activity_write_failures_total 1\n") !=
           std::string::npos;
  }));
  CHECK(swapd.value().process->WaitForLineMatching(
      [](std::string_view line) {
        return line.find("the activity history misses them") != std::string_view::npos;
      },
      20s));
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("act-full", false), "application/json", 60s)
            .status == 200);
  CHECK(HttpGet(url, "/health").status == 200);
}

}  // namespace
}  // namespace swapd::testing
