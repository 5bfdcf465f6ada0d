// In-flight requests: InflightTable on its own (llama-swap's entry, redaction, the throttle, the
// snapshot, cancel), then the real swapd with fake backends: the `inflight` events of a streamed
// request, the snapshot a new /api/events reader gets, POST /api/inflight/{id}/cancel of a stream
// (the backend stops) and of a request queued behind a slow load, 404 for an unknown id, uiConfig.
#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <nlohmann/json.hpp>
#include <regex>

#include "frontdoor/inflight_table.h"
#include "tests/support/event_stream.h"
#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

HttpRequest ChatRequest() {
  HttpRequest req;
  req.method = "POST";
  req.path = req.target = "/v1/chat/completions";
  req.remote_addr = "10.0.0.9";
  req.headers.Add("authorization", "Bearer secret");
  req.headers.Add("X-API-KEY", "secret2");
  req.headers.Add("content-type", "application/json");
  req.headers.Add("Content-Type", "text/plain");  // a second value: the first one counts
  req.headers.Add("Cookie", "c=1");
  return req;
}

// What a table's listener was told; the table tells from its own thread.
class Told {
 public:
  void Add(const json& data) {
    std::lock_guard lock(mu_);
    told_.push_back(data);
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return told_.size();
  }
  json operator[](size_t i) const {
    std::lock_guard lock(mu_);
    return told_.at(i);
  }
  // True once `n` events were told, within a generous deadline.
  bool Reaches(size_t n) const {
    return WaitFor([&] { return size() >= n; }, 10s, 5ms) && size() == n;
  }

 private:
  mutable std::mutex mu_;
  std::vector<json> told_;
};

TEST_CASE("InflightTable: an entry as llama-swap's, keys redacted, removed at the end",
          "[unit][events]") {
  InflightTable table;
  Told told;
  std::atomic<bool> watched = true;
  table.SetListener({[&] { return watched.load(); }, [&](const json& data) { told.Add(data); }});
  std::shared_ptr<InflightRequest> r = table.Start(ChatRequest(), "m1", "/v1/chat/completions");
  REQUIRE(told.Reaches(1));
  CHECK(told[0]["operation"] == "upsert");
  const json entry = told[0]["request"];
  CHECK(entry["id"] == r->id());
  CHECK(entry["id"].is_string());
  CHECK(entry["model"] == "m1");
  CHECK(entry["req_path"] == "/v1/chat/completions");
  CHECK(entry["method"] == "POST");
  CHECK(entry["remote_ip"] == "10.0.0.9");
  CHECK(entry["req_headers"] == json{{"Authorization", "[REDACTED]"},
                                     {"X-Api-Key", "[REDACTED]"},
                                     {"Content-Type", "application/json"},
                                     {"Cookie", "[REDACTED]"}});
  CHECK(entry["resp_headers"] == json::object());
  CHECK(entry["resp_bytes"] == 0);
  CHECK(entry["elapsed_ms"].is_number_integer());
  CHECK(entry["metadata"] == json::object());
  CHECK(std::regex_match(entry["timestamp"].get<std::string>(),
                         std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));

  // Headers, then bytes: the first bytes within 250 ms of the last upsert wait their turn.
  std::string set_cookie = "Set-Cookie";
  std::string type = "content-type";
  std::string keep_alive = "Keep-Alive";
  r->SetResponseHeaders(
      {{type, "text/event-stream"}, {set_cookie, "s=1"}, {keep_alive, "timeout=5"}});
  REQUIRE(told.Reaches(2));
  CHECK(told[1]["request"]["resp_headers"] ==
        json{{"Content-Type", "text/event-stream"}, {"Set-Cookie", "[REDACTED]"}});
  r->AddResponseBytes(10);
  REQUIRE(WaitFor(
      [&] {
        r->AddResponseBytes(1);
        return told.size() == 3;
      },
      5s, 20ms));
  CHECK(told[2]["request"]["resp_bytes"].get<int>() > 10);

  // Nobody listens: nothing rendered, nothing told.
  watched = false;
  r->SetResponseHeaders({});
  watched = true;

  json snapshot;
  table.WithSnapshot([&](const json& s) { snapshot = s; });
  REQUIRE(snapshot["operation"] == "snapshot");
  REQUIRE(snapshot["requests"].size() == 1);
  CHECK(snapshot["requests"][0]["id"] == r->id());
  CHECK(table.size() == 1);
  CHECK(told.size() == 3);

  const std::string id = r->id();
  r.reset();
  REQUIRE(told.Reaches(4));
  CHECK(told[3] == json{{"operation", "remove"}, {"id", id}});
  CHECK(table.size() == 0);
  table.WithSnapshot([&](const json& s) { snapshot = s; });
  CHECK(snapshot == json{{"operation", "snapshot"}, {"requests", json::array()}});
}

TEST_CASE(
    "InflightTable: changes are told in batches; a request that came and went unseen is not "
    "told",
    "[unit][events]") {
  // Changes at most every 2 s: what follows happens well within one interval, even on a busy
  // machine.
  InflightTable table(2s);
  Told told;
  table.SetListener({[] { return true; }, [&](const json& data) { told.Add(data); }});
  auto first = table.Start(ChatRequest(), "m", "/v1/completions");
  REQUIRE(told.Reaches(1));  // the first change goes at once: nothing was told before
  // Within the next interval: a request that starts and ends, and headers of the first.
  table.Start(ChatRequest(), "m", "/v1/completions").reset();
  first->SetResponseHeaders({});
  auto third = table.Start(ChatRequest(), "m", "/v1/completions");
  REQUIRE(told.Reaches(3));  // one batch: the first's upsert and the third's, not the second's
  CHECK(told[1]["request"]["id"] == first->id());
  CHECK(told[2]["request"]["id"] == third->id());
  // A request told and then ended is told ended, once.
  const std::string id = third->id();
  third.reset();
  REQUIRE(told.Reaches(4));
  CHECK(told[3] == json{{"operation", "remove"}, {"id", id}});
}

TEST_CASE("InflightTable: requests start and end while a batch is told", "[unit][events]") {
  // Telling a batch (rendering it, delivering it to every reader) holds no lock that a request's
  // thread waits for: here the listener is stuck inside its first event while another request
  // starts, gets its headers and ends.
  Told told;
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> first{true};
  InflightTable table(1ms);
  table.SetListener({[] { return true; },
                     [&](const json& data) {
                       told.Add(data);
                       if (!first.exchange(false)) return;
                       entered.set_value();
                       released.wait();
                     }});
  auto held = table.Start(ChatRequest(), "m", "/v1/completions");
  // Released before any REQUIRE: a listener stuck for good would hang the table's pacer.
  const bool inside = entered.get_future().wait_for(10s) == std::future_status::ready;
  std::future<size_t> meanwhile;
  bool done = false;
  if (inside) {
    meanwhile = std::async(std::launch::async, [&] {
      auto r = table.Start(ChatRequest(), "m", "/v1/completions");
      r->SetResponseHeaders({});
      return table.size();
    });
    done = meanwhile.wait_for(10s) == std::future_status::ready;
  }
  release.set_value();
  REQUIRE(inside);
  REQUIRE(done);
  CHECK(meanwhile.get() == 2);  // (the second ends after it counted)
  CHECK(told[0]["request"]["id"] == held->id());
}

TEST_CASE("InflightTable: ids count up; cancel marks a request, unknown ids are refused",
          "[unit][events]") {
  InflightTable table;
  HttpRequest req = ChatRequest();
  req.headers.Add("X-Forwarded-For", " 192.0.2.7 , 10.0.0.1");
  auto a = table.Start(req, "m", "/v1/completions");
  auto b = table.Start(req, "m", "/v1/completions");
  CHECK(std::stoi(b->id()) == std::stoi(a->id()) + 1);
  json snapshot;
  table.WithSnapshot([&](const json& s) { snapshot = s; });
  REQUIRE(snapshot["requests"].size() == 2);
  CHECK(snapshot["requests"][0]["id"] == a->id());  // oldest first
  CHECK(snapshot["requests"][0]["remote_ip"] == "192.0.2.7");

  CHECK_FALSE(table.Cancel("999"));
  CHECK_FALSE(table.Cancel(""));
  CHECK_FALSE(table.Cancel("x1"));
  CHECK_FALSE(table.Cancel("99999999999999999999999"));
  CHECK(table.Cancel(b->id()));
  CHECK(b->cancelled());
  CHECK_FALSE(a->cancelled());
  CHECK_THAT(b->CancelledMessage(), Catch::Contains("cancelled"));
  const std::string gone = a->id();
  a.reset();
  CHECK_FALSE(table.Cancel(gone));
}

TEST_CASE("Inference routes are llama-swap's model-dispatched ones", "[unit][events]") {
  CHECK(IsInferenceRoute("POST", "/v1/chat/completions"));
  CHECK(IsInferenceRoute("POST", "/v1/audio/transcriptions"));
  CHECK(IsInferenceRoute("POST", "/infill"));
  CHECK(IsInferenceRoute("GET", "/props"));
  CHECK_FALSE(IsInferenceRoute("GET", "/v1/chat/completions"));
  CHECK_FALSE(IsInferenceRoute("POST", "/health"));
  CHECK_FALSE(IsInferenceRoute("GET", "/slots"));
}

// The first `inflight` event of `stream` after `from` whose data satisfies `match`.
json InflightEvent(EventStream& stream, const std::function<bool(const json&)>& match,
                   size_t from = 0) {
  return stream.Find([&](const Event& e) { return e.type == "inflight" && match(e.data); }, from);
}

bool Upsert(const json& d) { return d["operation"] == "upsert"; }

TEST_CASE("inflight events follow a streamed request: upserts with headers and bytes, a remove",
          "[integration][events]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("if-m", port, "--tokens-per-second 40"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  EventStream stream(url);
  REQUIRE(stream.Opened());
  REQUIRE(stream.WaitFor([](const Event& e) { return e.type == "inflight"; }));

  // 40 tokens at 40 per second: about a second of stream, several byte upserts.
  StreamedReply reply =
      StreamPost(url, "/v1/chat/completions", ChatBody("if-m", true, 40), nullptr,
                 {{"Authorization", "Bearer sk-secret"}, {"X-Session-ID", "sess-1"}});
  CHECK(reply.status == 200);
  CHECK_THAT(reply.body, Catch::Contains("[DONE]"));

  json first = InflightEvent(stream, Upsert);
  REQUIRE(first.is_object());
  const json& entry = first["request"];
  const std::string id = entry["id"];
  CHECK(entry["model"] == "if-m");
  CHECK(entry["req_path"] == "/v1/chat/completions");
  CHECK(entry["method"] == "POST");
  CHECK(entry["remote_ip"] == "127.0.0.1");
  CHECK(entry["req_headers"]["Authorization"] == "[REDACTED]");
  CHECK(entry["req_headers"]["X-Session-Id"] == "sess-1");
  CHECK_THAT(json(entry["req_headers"]).dump(), !Catch::Contains("sk-secret"));
  CHECK(entry["metadata"] == json::object());
  // The answer's headers, then its bytes as they flow; then the end.
  CHECK(InflightEvent(stream, [&](const json& d) {
          return Upsert(d) && d["request"]["id"] == id &&
                 d["request"]["resp_headers"].value("Content-Type", "") == "text/event-stream";
        }).is_object());
  CHECK(InflightEvent(stream, [&](const json& d) {
          return Upsert(d) && d["request"]["id"] == id && d["request"]["resp_bytes"] > 0;
        }).is_object());
  CHECK(InflightEvent(stream, [&](const json& d) {
          return d == json{{"operation", "remove"}, {"id", id}};
        }).is_object());
  // Throttled: no two byte upserts of it within 250 ms would be far more than this.
  int upserts = 0;
  for (const Event& e : stream.Events()) {
    if (e.type == "inflight" && Upsert(e.data) && e.data["request"]["id"] == id) ++upserts;
  }
  CHECK(upserts >= 3);
  CHECK(upserts <= 12);
  // A route that is not inference is not in flight.
  size_t seen = stream.Count();
  REQUIRE(HttpGet(url, "/upstream/if-m/health").status == 200);
  REQUIRE(HttpGet(url, "/v1/models").status == 200);
  json later = stream.Find([](const Event& e) { return e.type == "modelStatus"; }, seen);
  for (size_t i = seen; i < stream.Events().size(); ++i) {
    CHECK(stream.Events()[i].type != "inflight");
  }
}

TEST_CASE("a new /api/events reader gets the requests in flight; cancel stops a stream",
          "[integration][events]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("if-c", port, "--tokens-per-second 20"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  std::atomic<int> chunks{0};
  // 400 tokens at 20 per second: 20 s unless cancelled.
  auto streamed = std::async(std::launch::async, [&] {
    return StreamPost(url, "/v1/chat/completions", ChatBody("if-c", true, 400),
                      [&](const std::string&) {
                        ++chunks;
                        return true;
                      },
                      {{"x-api-key", "sk-secret"}});
  });
  REQUIRE(WaitFor([&] { return chunks.load() >= 3; }, 30s, 20ms));

  EventStream stream(url);
  REQUIRE(stream.Opened());
  json snapshot = InflightEvent(stream, [](const json& d) { return d["operation"] == "snapshot"; });
  REQUIRE(snapshot["requests"].size() == 1);
  const json& entry = snapshot["requests"][0];
  const std::string id = entry["id"];
  CHECK(entry["model"] == "if-c");
  CHECK(entry["req_headers"]["X-Api-Key"] == "[REDACTED]");
  CHECK(entry["resp_headers"]["Content-Type"] == "text/event-stream");
  CHECK(entry["resp_bytes"] > 0);
  CHECK(entry["elapsed_ms"] > 0);

  const auto cancelled_at = std::chrono::steady_clock::now();
  HttpReply cancel = HttpPost(url, "/api/inflight/" + id + "/cancel", "");
  CHECK(cancel.status == 200);
  CHECK(json::parse(cancel.body, nullptr, false) == json{{"msg", "ok"}});
  // The client's stream ends at once with an error event, not after 20 s with [DONE].
  REQUIRE(streamed.wait_for(10s) == std::future_status::ready);
  CHECK(std::chrono::steady_clock::now() - cancelled_at < 10s);
  StreamedReply reply = streamed.get();
  CHECK(reply.status == 200);
  CHECK_THAT(reply.body, Catch::Contains("\"error\"") && Catch::Contains("cancelled") &&
                             !Catch::Contains("[DONE]"));
  // The backend saw its client leave and stopped generating.
  PollResult stopped = PollUntil(
      url, "/upstream/if-c/stats",
      [](const HttpReply& r) {
        json doc = json::parse(r.body, nullptr, false);
        return doc.is_object() && doc.value("cancelled_streams", 0) >= 1;
      },
      15s, 50ms);
  INFO(stopped.last.Describe());
  CHECK(stopped.met);
  CHECK(InflightEvent(stream, [&](const json& d) {
          return d == json{{"operation", "remove"}, {"id", id}};
        }).is_object());
  // Gone now: 404, OpenAI-shaped.
  HttpReply again = HttpPost(url, "/api/inflight/" + id + "/cancel", "");
  CHECK(again.status == 404);
  CHECK(json::parse(again.body, nullptr, false)["error"]["message"].is_string());
  // The model serves the next request as usual.
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("if-c", false, 2), "application/json", 30s)
            .status == 200);
}

TEST_CASE("cancel withdraws a request queued for a slow load; unknown ids get 404",
          "[integration][events]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("if-q", port, "--load-ms 60000"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  HttpReply unknown = HttpPost(url, "/api/inflight/12345/cancel", "");
  CHECK(unknown.status == 404);
  json error = json::parse(unknown.body, nullptr, false);
  CHECK(error["error"]["message"] == "inflight request not found: \"12345\"");
  CHECK(HttpPost(url, "/api/inflight/abc/cancel", "").status == 404);
  CHECK(HttpPost(url, "/api/inflight//cancel", "").status == 404);
  CHECK(HttpGet(url, "/api/inflight/1/cancel").status == 404);

  EventStream stream(url);
  REQUIRE(stream.Opened());
  auto queued = std::async(std::launch::async, [&] {
    return HttpPost(url, "/v1/chat/completions", ChatBody("if-q", false), "application/json", 90s);
  });
  // Waiting for its model is being in flight.
  json upsert = InflightEvent(stream, Upsert);
  REQUIRE(upsert.is_object());
  const std::string id = upsert["request"]["id"];
  CHECK(upsert["request"]["model"] == "if-q");
  REQUIRE(PollUntil(
              url, "/api/models",
              [](const HttpReply& r) {
                json doc = json::parse(r.body, nullptr, false);
                return doc.is_object() && doc["models"][0].value("queued", 0) == 1;
              },
              20s, 20ms)
              .met);
  CHECK(HttpPost(url, "/api/inflight/" + id + "/cancel", "").status == 200);
  REQUIRE(queued.wait_for(10s) == std::future_status::ready);
  HttpReply reply = queued.get();
  CHECK(reply.status == 499);  // not a 5xx, which clients send again
  CHECK_THAT(json::parse(reply.body, nullptr, false)["error"]["message"].get<std::string>(),
             Catch::Contains("was cancelled"));
  CHECK(InflightEvent(stream, [&](const json& d) {
          return d == json{{"operation", "remove"}, {"id", id}};
        }).is_object());
  CHECK(PollUntil(
            url, "/api/models",
            [](const HttpReply& r) {
              json doc = json::parse(r.body, nullptr, false);
              return doc.is_object() && doc["models"][0].value("queued", -1) == 0;
            },
            20s, 20ms)
            .met);
}

TEST_CASE("uiConfig on connect carries ui.activity.session_id", "[integration][events]") {
  auto swapd = StartSwapd("ui:\n  activity:\n    session_id: [X-Conversation-Id]\nmodels:\n" +
                          FakeModelYaml("if-u", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  EventStream stream(swapd.value().base_url);
  REQUIRE(stream.Opened());
  json ui = stream.Find([](const Event& e) { return e.type == "uiConfig"; });
  CHECK(ui == json{{"activity", {{"session_id", {"X-Conversation-Id"}}}}});
}

TEST_CASE("a config whose ui.activity.session_id is not a list does not start",
          "[integration][events]") {
  auto swapd = StartSwapd("ui:\n  activity:\n    session_id: X-Session-ID\nmodels:\n" +
                              FakeModelYaml("if-bad", FreeLoopbackPort()),
                          {}, {}, 5s);
  REQUIRE_FALSE(swapd.ok());
  CHECK_THAT(swapd.status().message(),
             Catch::Contains("config.yaml:3:17: ") &&
                 Catch::Contains("ui.activity.session_id: expected a list"));
}

}  // namespace
}  // namespace swapd::testing
