// Load progress end to end: the LoadTimeStore's medians; the real swapd with fake backends that
// print llama-server's load output (metadata, load_tensors, the dots) giving `loading` events of
// rising progress through the stages; load times kept in store.path giving an ETA on the first
// load after a restart, also for a backend that prints nothing parseable; sendLoadingState's text
// with the share done and llama-swap's "Queue position: #N".
#include <signal.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/load_time_store.h"
#include "tests/support/event_stream.h"
#include "tests/support/http_wait.h"
#include "tests/support/raw_connection.h"
#include "tests/support/swapd_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string StoreYaml(const std::string& path) { return "store:\n  path: " + path + "\n"; }

bool IsStart(const Event& e, const std::string& model) {
  return e.type == "loading" && e.data["model"] == model && e.data["stage"] != "ready" &&
         e.data["stage"] != "failed";
}

TEST_CASE("LoadTimeStore: the median of the last loads per definition, kept in the file",
          "[unit][loadprogress]") {
  TempDir tmp("swapd-loadtimes");
  const std::string path = tmp.Path("swapd.db");
  {
    auto opened = LoadTimeStore::Open(path);
    REQUIRE(opened.ok());
    LoadTimeStore& store = *opened.value();
    CHECK_FALSE(store.Expected("m", "d1").value());
    for (int ms : {1000, 9000, 1200, 1100, 1300}) {
      REQUIRE(store.Record("m", "d1", std::chrono::milliseconds(ms), 1).ok());
    }
    CHECK(store.Expected("m", "d1").value() == std::chrono::milliseconds(1200));
    // Another definition of the model (its cmd changed) starts afresh.
    CHECK_FALSE(store.Expected("m", "d2").value());
    REQUIRE(store.Record("m", "d2", 4000ms, 2).ok());
    REQUIRE(store.Record("m", "d2", 6000ms, 3).ok());
    CHECK(store.Expected("m", "d2").value() == std::chrono::milliseconds(5000));
    // Only the last kMedianOf count.
    for (int i = 0; i < LoadTimeStore::kMedianOf; ++i)
      REQUIRE(store.Record("m", "d1", 500ms, 4).ok());
    CHECK(store.Expected("m", "d1").value() == std::chrono::milliseconds(500));
  }
  auto reopened = LoadTimeStore::Open(path);
  REQUIRE(reopened.ok());
  CHECK(reopened.value()->Expected("m", "d2").value() == std::chrono::milliseconds(5000));
  // A file that is no database: an error, not a crash.
  const std::string junk = tmp.Path("junk.db");
  {
    std::ofstream out(junk);
    out << std::string(8192, 'x');
  }
  CHECK_FALSE(LoadTimeStore::Open(junk).ok());
}

TEST_CASE("loading events: stages and rising progress from llama-server's output",
          "[integration][events][loading][loadprogress]") {
  auto swapd =
      StartSwapd("models:\n" + FakeModelYaml("lp-m", FreeLoopbackPort(), "--load-ms 3000"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  EventStream stream(url);
  REQUIRE(stream.Opened());
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("lp-m", false), "application/json", 60s)
            .status == 200);
  REQUIRE(stream.WaitFor([](const Event& e) {
    return e.type == "loading" && e.data["model"] == "lp-m" && e.data["stage"] == "ready";
  }));
  std::vector<std::string> stages;
  std::vector<double> progress;
  for (const Event& e : stream.Events()) {
    if (e.type != "loading") continue;
    INFO(e.data.dump());
    const std::string stage = e.data["stage"];
    if (stages.empty() || stages.back() != stage) stages.push_back(stage);
    if (e.data["progress"].is_number()) progress.push_back(e.data["progress"]);
  }
  INFO(json(stages).dump() << " " << json(progress).dump());
  REQUIRE(stages.size() >= 3);
  CHECK(stages.front() == "starting");
  CHECK(stages.back() == "ready");
  CHECK(std::find(stages.begin(), stages.end(), "tensors") != stages.end());
  // Never backwards, and the dots made it move within the tensors' stage.
  REQUIRE(progress.size() >= 4);
  for (size_t i = 1; i < progress.size(); ++i) CHECK(progress[i] >= progress[i - 1]);
  int inside = 0;
  for (double p : progress) inside += p > 0.06 && p < 0.85;
  CHECK(inside >= 2);
  CHECK(progress.back() == 1.0);
}

TEST_CASE("loading events: the stages of a 2026 llama-server's output, each line after a time",
          "[integration][events][loading][loadprogress]") {
  auto swapd = StartSwapd(
      "models:\n" + FakeModelYaml("lp-2026", FreeLoopbackPort(), "--load-ms 4000 --log-2026"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  EventStream stream(url);
  REQUIRE(stream.Opened());
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("lp-2026", false), "application/json", 60s)
            .status == 200);
  REQUIRE(stream.WaitFor([](const Event& e) {
    return e.type == "loading" && e.data["model"] == "lp-2026" && e.data["stage"] == "ready";
  }));
  std::vector<std::string> stages;
  for (const Event& e : stream.Events()) {
    if (e.type != "loading") continue;
    const std::string stage = e.data["stage"];
    if (stages.empty() || stages.back() != stage) stages.push_back(stage);
  }
  // "loading model" is the metadata, "initializing" the context, "model loaded" ready. The fake
  // spends 2.4 s between the first two and 1.6 s before the third: the feed, which samples every
  // 500 ms, sees each stage. "model loaded" may be read before swapd's health check sees the
  // backend ready: a sample in between says "warmup", nothing left.
  if (stages.size() >= 2 && stages[stages.size() - 2] == "warmup") {
    stages.erase(stages.end() - 2);
  }
  CHECK(stages == std::vector<std::string>{"starting", "metadata", "context", "ready"});
}

TEST_CASE("load times survive a restart: the first load has an ETA",
          "[integration][events][loading][loadprogress]") {
  TempDir tmp("swapd-loadtimes");
  const std::string yaml =
      StoreYaml(tmp.Path("swapd.db")) + "models:\n" +
      FakeModelYaml("lt-quiet", FreeLoopbackPort(), "--load-ms 1500 --quiet-load");
  int64_t kept_ms = 0;
  {
    auto swapd = StartSwapd(yaml);
    REQUIRE(swapd.ok());
    INFO(swapd.value().process->Output());
    CHECK(HttpPost(swapd.value().base_url, "/v1/chat/completions", ChatBody("lt-quiet", false),
                   "application/json", 60s)
              .status == 200);
    // The load time is written by the feed's thread: wait until it is in the file.
    CHECK(WaitFor(
        [&] {
          // Whatever its definition's key: the table itself.
          auto db = SqliteDb::Open(tmp.Path("swapd.db"), "");
          if (!db.ok()) return false;
          Statement kept(*db.value(), "reading load times",
                         "SELECT duration_ms FROM swapd_load_times WHERE model = 'lt-quiet'");
          if (!kept.Next()) return false;
          kept_ms = kept.Get<int64_t>(0);
          return true;
        },
        30s));
    swapd.value().process->Signal(SIGTERM);
    REQUIRE(swapd.value().process->WaitForExit(30s));
  }
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  EventStream stream(url);
  REQUIRE(stream.Opened());
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("lt-quiet", false), "application/json", 60s)
            .status == 200);
  REQUIRE(stream.WaitFor([](const Event& e) {
    return e.type == "loading" && e.data["model"] == "lt-quiet" && e.data["stage"] == "ready";
  }));
  // A backend that prints nothing parseable until its last line ("main: model loaded", which may
  // be read just before swapd's health check sees it ready: then "warmup", nothing left): time
  // against the kept load time.
  int with_eta = 0;
  for (const Event& e : stream.Events()) {
    if (!IsStart(e, "lt-quiet") || !e.data["eta_seconds"].is_number()) continue;
    INFO(e.data.dump());
    if (e.data["stage"] == "warmup") {
      CHECK(e.data["eta_seconds"] == 0.0);
      continue;
    }
    CHECK(e.data["stage"] == "starting");
    // At most the kept time (the load began before the event).
    CHECK(e.data["eta_seconds"].get<double>() <= kept_ms / 1000.0 + 0.001);
    CHECK(e.data["progress"].get<double>() < 1.0);
    ++with_eta;
  }
  CHECK(kept_ms >= 1500);
  CHECK(with_eta >= 1);
}

TEST_CASE("sendLoadingState: the share done, the time left, and Queue position #N",
          "[integration][front][loading][loadprogress]") {
  const std::string yaml = "sendLoadingState: true\nmodels:\n" +
                           FakeModelYaml("q-a", FreeLoopbackPort(), "--load-ms 4000") +
                           FakeModelYaml("q-b", FreeLoopbackPort(), "--load-ms 1500");
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const SwapdInstance& s = swapd.value();
  INFO(s.process->Output());
  const int port = s.port;

  // q-a loads (the llama.cpp router API's load); a request for q-b, of the same (default) group,
  // waits behind it.
  REQUIRE(HttpPost(s.base_url, "/models/load", R"({"model":"q-a"})").status == 200);
  RawConnection c(port);
  REQUIRE(c.Send(RawPost("/v1/chat/completions", ChatBody("q-b", true))));
  const std::string queued = c.ReadUntil("Queue position: #2 ", 30s);
  CHECK_THAT(queued, Catch::Contains("Queue position: #2 "));
  // Then q-b's own load: its stages and share done.
  const std::string rest = c.ReadUntil("Done! (", 60s);
  CHECK_THAT(rest, Catch::Contains("tensors: "));
  CHECK_THAT(rest, Catch::Contains("%"));
  CHECK_THAT(rest, Catch::Contains(" left"));
}

// The data of every `data: ` frame of a GET /models/sse body read so far.
std::vector<json> ModelFrames(const std::string& body) {
  std::vector<json> out;
  size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    const size_t end = body.find("\n\n", at);
    if (end == std::string::npos) break;
    out.push_back(json::parse(body.substr(at + 6, end - at - 6), nullptr, false));
    at = end + 2;
  }
  return out;
}

TEST_CASE("GET /models/sse: llama.cpp's model_status frames, with the load's progress",
          "[integration][events][loading][loadprogress]") {
  auto swapd = StartSwapd("apiKeys: [sse-key]\nmodels:\n" +
                          FakeModelYaml("sse-m", FreeLoopbackPort(), "--load-ms 2000"));
  REQUIRE(swapd.ok());
  const SwapdInstance& s = swapd.value();
  INFO(s.process->Output());
  const int port = s.port;
  {
    RawConnection refused(port);
    REQUIRE(refused.Send("GET /models/sse HTTP/1.1\r\nHost: x\r\n\r\n"));
    CHECK(RawStatus(refused.ReadUntil("\r\n\r\n")) == 401);
  }
  RawConnection c(port);
  REQUIRE(c.Send("GET /models/sse HTTP/1.0\r\nHost: x\r\nAuthorization: Bearer sse-key\r\n\r\n"));
  std::string body = c.ReadUntil(R"("value":"unloaded")", 30s);
  CHECK(RawStatus(body) == 200);
  CHECK_THAT(body, Catch::Contains("text/event-stream"));
  RawConnection load(port);
  std::string request = RawPost("/models/load", R"({"model":"sse-m"})");
  request.insert(request.find("\r\n") + 2, "Authorization: Bearer sse-key\r\n");
  REQUIRE(load.Send(request));
  CHECK(RawStatus(load.ReadUntil("\r\n\r\n")) == 200);
  body += c.ReadUntil("{\"value\":\"loaded\"},\"event\":\"model_status\",\"model\":\"sse-m\"}\n\n",
                      60s);
  std::vector<json> frames = ModelFrames(body);
  INFO(body);
  REQUIRE(frames.size() >= 3);
  CHECK(frames.front() ==
        json{{"model", "sse-m"}, {"event", "model_status"}, {"data", {{"value", "unloaded"}}}});
  CHECK(frames.back() ==
        json{{"model", "sse-m"}, {"event", "model_status"}, {"data", {{"value", "loaded"}}}});
  double last = -1;
  int with_progress = 0;
  for (const json& f : frames) {
    if (f["data"]["value"] != "loading" || !f["data"].contains("progress")) continue;
    const json& p = f["data"]["progress"];
    CHECK(p["stages"] == json{"text_model"});
    CHECK(p["current"] == "text_model");
    CHECK(p["value"].get<double>() >= last);
    last = p["value"].get<double>();
    ++with_progress;
  }
  CHECK(with_progress >= 2);
  CHECK(last > 0.0);
}

}  // namespace
}  // namespace swapd::testing
