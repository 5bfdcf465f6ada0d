// Tests of request captures (captureBuffer): base64, what a CaptureBuilder keeps (redacted
// headers, media routes, failed answers, a stream past the limit), the CaptureStore's bound
// (oldest out first, oversize refused, a shrinking reload); then the real swapd with fake
// backends: GET /api/captures/{id} of a chat request and of a streamed one, has_capture on the
// activity rows, captureBuffer: 0, a 1 MB buffer evicting old captures, unknown ids, apiKeys, a
// reload that turns captures off and on again.
#include <httplib.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "base/base64.h"
#include "frontdoor/request_capture.h"
#include "store/activity_log.h"
#include "store/capture_store.h"
#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

TEST_CASE("base64 as Go encodes a []byte, and back", "[unit][captures]") {
  CHECK(EncodeBase64("") == "");
  CHECK(EncodeBase64("f") == "Zg==");
  CHECK(EncodeBase64("fo") == "Zm8=");
  CHECK(EncodeBase64("foo") == "Zm9v");
  CHECK(EncodeBase64("foob") == "Zm9vYg==");
  CHECK(EncodeBase64(std::string("\xff\xfe\x00\x01", 4)) == "//4AAQ==");
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  CHECK(DecodeBase64(EncodeBase64(all)) == all);
}

std::shared_ptr<const RequestCapture> CaptureOf(size_t body_bytes) {
  CaptureBuilder builder(size_t{1} << 20, "/v1/chat/completions", nullptr,
                         std::string(body_bytes, 'x'));
  return builder.Finish(200);
}

TEST_CASE("CaptureBuilder: redacted headers, the bodies, nothing when off", "[unit][captures]") {
  HttpHeaders headers;
  headers.Add("Authorization", "Bearer sk-secret");
  headers.Add("x-api-key", "sk-other");
  headers.Add("Cookie", "session=1");
  headers.Add("Content-Type", "application/json");
  CaptureBuilder builder(4000, "/v1/chat/completions", &headers, R"({"model":"m"})");
  HttpHeaders answer;
  answer.Add("Set-Cookie", "a=b");
  answer.Add("X-Backend", "fake");
  builder.SetResponseHeaders(answer, "application/json");
  builder.AddResponseBytes(R"({"choices":)");
  builder.AddResponseBytes("[]}");
  auto capture = builder.Finish(200);
  REQUIRE(capture);
  CHECK(capture->req_path == "/v1/chat/completions");
  REQUIRE(capture->req_headers);
  CHECK(capture->req_headers->ToJson() == json{{"Authorization", "[REDACTED]"},
                                               {"X-Api-Key", "[REDACTED]"},
                                               {"Cookie", "[REDACTED]"},
                                               {"Content-Type", "application/json"}});
  CHECK(capture->req_body == R"({"model":"m"})");
  REQUIRE(capture->resp_headers);
  CHECK(capture->resp_headers->ToJson() == json{{"Set-Cookie", "[REDACTED]"},
                                                {"X-Backend", "fake"},
                                                {"Content-Type", "application/json"}});
  CHECK(capture->resp_body == R"({"choices":[]})");

  CaptureBuilder off(0, "/v1/chat/completions", &headers, "{}");
  off.AddResponseBytes("x");
  CHECK(off.Finish(200) == nullptr);
}

TEST_CASE("CaptureBuilder: a failed answer keeps the request, media routes keep no media",
          "[unit][captures]") {
  CaptureBuilder failed(1000, "/v1/chat/completions", nullptr, "{}");
  failed.AddResponseBytes(R"({"error":{}})");
  auto kept = failed.Finish(502);
  REQUIRE(kept);
  CHECK(kept->req_body == "{}");
  CHECK_FALSE(kept->resp_body.has_value());

  CaptureBuilder speech(1000, "/v1/audio/speech", nullptr, R"({"input":"hi"})");
  speech.AddResponseBytes("RIFF....WAVE");
  auto audio = speech.Finish(200);
  REQUIRE(audio);
  CHECK(audio->req_body == R"({"input":"hi"})");
  CHECK_FALSE(audio->resp_body.has_value());

  CaptureBuilder upload(1000, "/v1/audio/transcriptions", nullptr, "multipart bytes");
  upload.AddResponseBytes(R"({"text":"hi"})");
  auto text = upload.Finish(200);
  REQUIRE(text);
  CHECK_FALSE(text->req_body.has_value());
  CHECK(text->resp_body == R"({"text":"hi"})");
}

TEST_CASE("CaptureBuilder: a stream longer than the buffer is dropped, and stops being copied",
          "[unit][captures]") {
  CaptureBuilder builder(1000, "/v1/chat/completions", nullptr, "{}");
  for (int i = 0; i < 9; ++i) builder.AddResponseBytes(std::string(100, 'd'));
  builder.AddResponseBytes(std::string(200, 'd'));  // 1100 bytes: past the limit
  CHECK(builder.Finish(200) == nullptr);

  CaptureBuilder big_request(1000, "/v1/chat/completions", nullptr, std::string(2000, 'x'));
  CHECK(big_request.Finish(200) == nullptr);
}

// Whether two captures hold the same parts.
bool Same(const RequestCapture& a, const RequestCapture& b) {
  auto headers = [](const std::optional<HeaderSnapshot>& h) {
    return h ? std::optional<std::string>(h->encoded()) : std::nullopt;
  };
  return a.req_path == b.req_path && headers(a.req_headers) == headers(b.req_headers) &&
         a.req_body == b.req_body && headers(a.resp_headers) == headers(b.resp_headers) &&
         a.resp_body == b.resp_body;
}

TEST_CASE("CaptureStore: bounded bytes, oldest out first, oversize refused, shrink on reload",
          "[unit][captures]") {
  auto a = CaptureOf(1000), b = CaptureOf(1000), c = CaptureOf(1000);
  const size_t each = CaptureStore::BytesOf(*a);
  CHECK(each > 1000);
  CHECK(each < a->Bytes());  // the ring holds the bytes, without each allocation's overhead
  CaptureStore store(2 * each + each / 2);  // room for two
  CHECK(store.Add(1, *a));
  CHECK(store.Add(2, *b));
  CHECK(store.Has(1));
  CHECK(store.bytes() == 2 * each);
  CHECK(store.Add(3, *c));
  CHECK_FALSE(store.Has(1));  // the oldest went
  CHECK(store.Has(2));
  REQUIRE(store.Find(3) != nullptr);
  CHECK(Same(*store.Find(3), *c));
  CHECK(store.Find(1) == nullptr);
  CHECK(store.size() == 2);

  // Bigger than the whole buffer: not kept, and nothing dropped for it.
  CHECK_FALSE(store.Add(4, *CaptureOf(3 * each)));
  CHECK(store.Has(2));
  CHECK(store.Has(3));

  // The ids began again (a new history): what was held from that id on goes.
  CHECK(store.Add(2, *b));
  CHECK_FALSE(store.Has(3));
  CHECK(Same(*store.Find(2), *b));
  CHECK(store.bytes() == each);
  CHECK(store.Add(3, *c));

  store.SetCapacity(each);  // a reload with a smaller buffer
  CHECK_FALSE(store.Has(2));
  CHECK(store.Has(3));
  CHECK(Same(*store.Find(3), *c));
  CHECK(store.bytes() == each);

  store.SetCapacity(0);  // captureBuffer: 0
  CHECK(store.size() == 0);
  CHECK(store.bytes() == 0);
  CHECK_FALSE(store.Add(5, *a));
}

TEST_CASE("CaptureStore: the ring keeps the newest captures whole through its laps and reloads",
          "[unit][captures]") {
  std::mt19937 random(7);  // fixed: the same run every time
  auto below = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random); };
  CaptureStore store(size_t{200} << 10);
  std::map<int64_t, std::shared_ptr<RequestCapture>> added;
  int64_t id = 0;
  for (int round = 0; round < 3000; ++round) {
    auto c = std::make_shared<RequestCapture>();
    c->req_path = "/v1/chat/completions/" + std::to_string(round);
    if (below(4) != 0) {
      HttpHeaders headers;
      headers.Add("X-Round", std::to_string(round));
      c->req_headers.emplace(headers);
    }
    if (below(4) != 0) c->req_body = std::string(below(5000), static_cast<char>('a' + round % 26));
    if (below(2) != 0) c->resp_headers.emplace(HttpHeaders());
    // Now and then an answer of most of the buffer, which sweeps the ring.
    const size_t answer = below(50) == 0 ? below(90 << 10) : below(8000);
    if (below(3) != 0) c->resp_body = std::string(answer, static_cast<char>('A' + round % 26));
    if (below(200) == 0 && id > 10) id -= static_cast<int64_t>(below(10));  // a new history
    ++id;
    for (auto it = added.lower_bound(id); it != added.end();) it = added.erase(it);
    CHECK(store.Add(id, *c));
    added[id] = c;
    if (below(300) == 0) store.SetCapacity((size_t{100} + below(200)) << 10);  // a reload
    // The captures held are the newest ones, each as it was added, within the capacity.
    size_t held = 0, bytes = 0;
    auto it = added.rbegin();
    for (; it != added.rend(); ++it) {
      auto found = store.Find(it->first);
      if (!found) break;
      REQUIRE(Same(*found, *it->second));
      ++held;
      bytes += CaptureStore::BytesOf(*it->second);
    }
    // Nothing is held behind the newest one that went (and what went never comes back).
    for (; it != added.rend(); ++it) REQUIRE_FALSE(store.Has(it->first));
    for (auto old = added.begin(); old != added.end() && !store.Has(old->first);) {
      old = added.erase(old);
    }
    REQUIRE(store.Has(id));
    REQUIRE(held == store.size());
    REQUIRE(bytes == store.bytes());
    REQUIRE(bytes <= store.capacity());
  }
}

TEST_CASE("ActivityLog files each capture under its row's id, before telling of the row",
          "[unit][captures]") {
  CaptureStore captures(size_t{1} << 20);
  auto store = ActivityStore::Open(":memory:");
  REQUIRE(store.ok());
  std::atomic<bool> held_when_told{true};
  ActivityLog log(
      std::move(store).value(),
      [&](int64_t id) {
        // Every capture of the rows written so far (the odd ids, see below) is held by now.
        for (int64_t row = 1; row <= id; row += 2) {
          if (!captures.Has(row)) held_when_told = false;
        }
      },
      &captures);
  ActivityEntry entry;
  entry.model = "m";
  entry.status = 200;
  for (int i = 0; i < 20; ++i) log.Record(entry, i % 2 == 0 ? CaptureOf(10 + i) : nullptr);
  log.Flush();
  CHECK(held_when_told);
  for (int64_t id = 1; id <= 20; ++id) {
    INFO(id);
    CHECK(captures.Has(id) == (id % 2 == 1));  // the 1st, 3rd, ... request had one
  }
  CHECK(captures.Find(3)->req_body->size() == 12);
}

TEST_CASE("captureBuffer in bytes", "[unit][captures]") {
  CHECK(CaptureBufferBytes(0) == 0);
  CHECK(CaptureBufferBytes(-3) == 0);
  CHECK(CaptureBufferBytes(5) == 5u << 20);
}

// --- The real swapd ---

// The rows' captures are filed a moment after the rows are written (their ids come from the
// write), before the `activity` event: tests wait for has_capture, not for the row alone.
bool Captured(const json& row) { return row.value("has_capture", false); }

json Rows(const std::string& url) {
  HttpReply reply = HttpGet(url, "/api/metrics/activity?sort=id&order=asc&limit=100");
  REQUIRE(reply.status == 200);
  return json::parse(reply.body)["data"];
}

std::string Decoded(const json& body) { return DecodeBase64(body.get<std::string>()); }

TEST_CASE("GET /api/captures/{id}: a chat request and a streamed one, as llama-swap's",
          "[integration][captures]") {
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("cap-m", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  const std::string plain_body = ChatBody("cap-m", false, 4, "what is a capture");
  HttpReply plain = HttpPost(url, "/v1/chat/completions", plain_body, "application/json", 60s);
  REQUIRE(plain.status == 200);
  StreamedReply streamed = StreamPost(url, "/v1/chat/completions", ChatBody("cap-m", true, 4),
                                      nullptr, {{"X-Session-ID", "sess-9"}});
  REQUIRE(streamed.status == 200);
  REQUIRE(WaitFor([&] {
    const json rows = Rows(url);
    return rows.size() == 2 && Captured(rows[0]) && Captured(rows[1]);
  }));
  const json rows = Rows(url);

  HttpReply first = HttpGet(url, "/api/captures/" + std::to_string(rows[0]["id"].get<int>()));
  REQUIRE(first.status == 200);
  const json c = json::parse(first.body);
  CHECK(c["id"] == rows[0]["id"]);
  CHECK(c["req_path"] == "/v1/chat/completions");
  CHECK(c["req_headers"]["Content-Type"] == "application/json");
  CHECK(Decoded(c["req_body"]) == plain_body);
  CHECK_THAT(c["resp_headers"]["Content-Type"].get<std::string>(),
             Catch::StartsWith("application/json"));
  CHECK(Decoded(c["resp_body"]) == plain.body);

  HttpReply second = HttpGet(url, "/api/captures/" + std::to_string(rows[1]["id"].get<int>()));
  REQUIRE(second.status == 200);
  const json s = json::parse(second.body);
  CHECK(s["req_headers"]["X-Session-Id"] == "sess-9");
  CHECK_THAT(s["resp_headers"]["Content-Type"].get<std::string>(),
             Catch::StartsWith("text/event-stream"));
  CHECK(Decoded(s["resp_body"]) == streamed.body);  // the bytes the client got
  CHECK_THAT(Decoded(s["resp_body"]), Catch::Contains("data: [DONE]"));

  for (const char* id : {"999", "0", "-1"}) {
    INFO(id);
    HttpReply missing = HttpGet(url, std::string("/api/captures/") + id);
    CHECK(missing.status == 404);
    CHECK(json::parse(missing.body)["error"]["message"] == "capture not found");
  }
  HttpReply bad = HttpGet(url, "/api/captures/abc");
  CHECK(bad.status == 400);
  CHECK(json::parse(bad.body)["error"]["message"] == "invalid capture ID");
}

TEST_CASE(
    "A sendLoadingState answer's capture has the loading text the client got, then the stream",
    "[integration][captures]") {
  auto swapd = StartSwapd("sendLoadingState: true\nmodels:\n" +
                          FakeModelYaml("cap-load", FreeLoopbackPort(), "--load-ms 1200"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  StreamedReply streamed = StreamPost(url, "/v1/chat/completions", ChatBody("cap-load", true, 4));
  REQUIRE(streamed.status == 200);
  REQUIRE_THAT(streamed.body, Catch::Contains("swapd loading model: cap-load"));
  REQUIRE(WaitFor([&] {
    const json rows = Rows(url);
    return rows.size() == 1 && Captured(rows[0]);
  }));
  HttpReply reply = HttpGet(url, "/api/captures/" + std::to_string(Rows(url)[0]["id"].get<int>()));
  REQUIRE(reply.status == 200);
  CHECK(Decoded(json::parse(reply.body)["resp_body"]) == streamed.body);
}

TEST_CASE("Captures under apiKeys: the key is redacted, and the route wants a key",
          "[integration][captures]") {
  auto swapd = StartSwapd("apiKeys: [sk-cap-key]\nmodels:\n" +
                          FakeModelYaml("cap-auth", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  httplib::Client client(url);
  client.set_read_timeout(60, 0);
  client.set_bearer_token_auth("sk-cap-key");
  auto chat = client.Post("/v1/chat/completions", ChatBody("cap-auth", false), "application/json");
  REQUIRE(chat);
  REQUIRE(chat->status == 200);

  json rows;
  REQUIRE(WaitFor([&] {
    auto page = client.Get("/api/metrics/activity");
    if (!page || page->status != 200) return false;
    rows = json::parse(page->body)["data"];
    return rows.size() == 1 && Captured(rows[0]);
  }));
  const std::string path = "/api/captures/" + std::to_string(rows[0]["id"].get<int>());
  auto capture = client.Get(path);
  REQUIRE(capture);
  REQUIRE(capture->status == 200);
  const json c = json::parse(capture->body);
  CHECK(c["req_headers"]["Authorization"] == "[REDACTED]");
  CHECK_THAT(capture->body, !Catch::Contains("sk-cap-key"));

  CHECK(HttpGet(url, path).status == 401);  // no key
}

TEST_CASE("captureBuffer: 0 keeps no captures", "[integration][captures]") {
  auto swapd =
      StartSwapd("captureBuffer: 0\nmodels:\n" + FakeModelYaml("cap-off", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  REQUIRE(HttpPost(url, "/v1/chat/completions", ChatBody("cap-off", false), "application/json", 60s)
              .status == 200);
  REQUIRE(WaitFor([&] { return Rows(url).size() == 1; }));
  const json row = Rows(url)[0];
  CHECK(row["has_capture"] == false);
  CHECK(HttpGet(url, "/api/captures/" + std::to_string(row["id"].get<int>())).status == 404);
}

TEST_CASE("A 1 MB buffer drops the oldest captures; a refused request keeps its request",
          "[integration][captures]") {
  auto swapd =
      StartSwapd("captureBuffer: 1\nmodels:\n" + FakeModelYaml("cap-tiny", FreeLoopbackPort()) +
                 FakeModelYaml("cap-dead", FreeLoopbackPort(), "--exit-during-load 3"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  // 400 KB prompts: two captures fit in 1 MB, a third pushes the first out.
  const std::string prompt(400 << 10, 'p');
  for (int i = 0; i < 3; ++i) {
    REQUIRE(HttpPost(url, "/v1/chat/completions", ChatBody("cap-tiny", false, 2, prompt),
                     "application/json", 60s)
                .status == 200);
    REQUIRE(WaitFor([&] {
      const json rows = Rows(url);
      return rows.size() == static_cast<size_t>(i + 1) && Captured(rows[i]);
    }));
  }
  json rows = Rows(url);
  CHECK(rows[0]["has_capture"] == false);
  CHECK(rows[1]["has_capture"] == true);
  CHECK(rows[2]["has_capture"] == true);
  CHECK(HttpGet(url, "/api/captures/" + std::to_string(rows[0]["id"].get<int>())).status == 404);
  CHECK(HttpGet(url, "/api/captures/" + std::to_string(rows[2]["id"].get<int>())).status == 200);

  // A backend that fails to start: the request is kept, the answer's body is not.
  const std::string dead_body = ChatBody("cap-dead", false);
  REQUIRE(HttpPost(url, "/v1/chat/completions", dead_body, "application/json", 60s).status == 502);
  REQUIRE(WaitFor([&] {
    const json now = Rows(url);
    return now.size() == 4 && Captured(now[3]);
  }));
  rows = Rows(url);
  HttpReply failed = HttpGet(url, "/api/captures/" + std::to_string(rows[3]["id"].get<int>()));
  REQUIRE(failed.status == 200);
  const json f = json::parse(failed.body);
  CHECK(Decoded(f["req_body"]) == dead_body);
  CHECK(f["resp_body"].is_null());
  CHECK_THAT(f["resp_headers"]["Content-Type"].get<std::string>(),
             Catch::StartsWith("application/json"));
}

TEST_CASE("A reload applies captureBuffer: 0 drops the captures, a size keeps them again",
          "[integration][captures]") {
  const std::string models = "models:\n" + FakeModelYaml("cap-rl", FreeLoopbackPort());
  auto swapd = StartSwapd(models);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  // One more request; waits for its row, with its capture when `captured`.
  auto chat = [&](size_t rows, bool captured) {
    REQUIRE(
        HttpPost(url, "/v1/chat/completions", ChatBody("cap-rl", false), "application/json", 60s)
            .status == 200);
    REQUIRE(WaitFor([&] {
      const json now = Rows(url);
      return now.size() == rows && (!captured || Captured(now[rows - 1]));
    }));
  };
  chat(1, true);

  REQUIRE(RewriteConfig(swapd.value(), "captureBuffer: 0\n" + models));
  REQUIRE(HttpPost(url, "/api/config/reload", "").status == 200);
  CHECK(Rows(url)[0]["has_capture"] == false);
  CHECK(HttpGet(url, "/api/captures/" + std::to_string(Rows(url)[0]["id"].get<int>())).status ==
        404);
  chat(2, false);
  CHECK(Rows(url)[1]["has_capture"] == false);

  REQUIRE(RewriteConfig(swapd.value(), "captureBuffer: 1\n" + models));
  REQUIRE(HttpPost(url, "/api/config/reload", "").status == 200);
  chat(3, true);
  CHECK(Rows(url)[0]["has_capture"] == false);  // dropped by the reload to 0
}

}  // namespace
}  // namespace swapd::testing
