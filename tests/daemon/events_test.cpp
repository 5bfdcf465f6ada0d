// Tests of GET /api/events: EventHub on its own (llama-swap's frame, kept states, bounded queues
// that drop and then resend the states), modelStatus's shape from a real config; then the real
// swapd with fake backends: the frames on connect, a model's status and loading events live, a
// reader that never reads (swapd keeps serving and counts what it drops), the end at shutdown.
#include <signal.h>

#include <catch2/catch.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "config/loader.h"
#include "daemon/event_feed.h"
#include "daemon/event_hub.h"
#include "tests/support/event_stream.h"
#include "tests/support/http_wait.h"
#include "tests/support/latch.h"
#include "tests/support/raw_connection.h"
#include "tests/support/swapd_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::vector<Event> ParseEvents(std::string text) {
  std::vector<Event> out;
  REQUIRE(TakeEvents(text, out));
  CHECK(text.empty());
  return out;
}

std::string Text(const EventFrame& frame) { return *frame; }

TEST_CASE("An event frame is llama-swap's: type, and its data as a JSON string", "[unit][events]") {
  CHECK(Text(MakeEventFrame("logData", {{"source", "proxy"}, {"data", "hi\n"}})) ==
        "event:message\n"
        "data:{\"data\":\"{\\\"data\\\":\\\"hi\\\\n\\\",\\\"source\\\":\\\"proxy\\\"}\","
        "\"type\":\"logData\"}\n\n");
  // A backend's log line need not be UTF-8: replaced, never thrown.
  std::vector<Event> events = ParseEvents(Text(MakeEventFrame("logData", {{"data", "a\xff"}})));
  REQUIRE(events.size() == 1);
  CHECK(events[0].data["data"] == "a\xef\xbf\xbd");
}

TEST_CASE("EventHub: a reader gets its initial frames, the kept states, then what comes",
          "[unit][events]") {
  EventHub hub;
  hub.Publish("logData", {{"n", 0}});  // nobody reads: gone
  hub.PublishState("modelStatus", json::array({"old"}));
  hub.PublishState("profileChanged", {{"active", nullptr}});
  hub.PublishState("modelStatus", json::array({"new"}));  // replaces the kept one
  int told = 0;
  hub.SetOnSubscribe([&] { ++told; });
  auto reader = hub.Subscribe({MakeEventFrame("logData", {{"n", 1}})});
  CHECK(told == 1);
  CHECK(hub.readers() == 1);
  hub.Publish("loading", {{"model", "m"}});
  EventHub::Subscription::Batch batch = reader->Next(1s);
  std::string text;
  for (const EventFrame& f : batch.frames) text += *f;
  std::vector<Event> events = ParseEvents(text);
  CHECK(Types(events) ==
        std::vector<std::string>{"logData", "modelStatus", "profileChanged", "loading"});
  CHECK(events[0].data["n"] == 1);
  CHECK(events[1].data == json::array({"new"}));
  CHECK(batch.dropped == 0);
  CHECK(reader->Next(10ms).frames.empty());
  reader.reset();
  CHECK(hub.readers() == 0);
}

TEST_CASE("EventHub: a slow reader loses events, counted, then gets the states again",
          "[unit][events]") {
  EventHub hub(3);
  hub.PublishState("modelStatus", json::array({"s"}));
  auto slow = hub.Subscribe();
  auto fast = hub.Subscribe();
  CHECK(fast->Next(1s).frames.size() == 1);  // the kept state
  // The kept state is initial, not counted against the bound of 3.
  for (int i = 0; i < 5; ++i) hub.Publish("logData", {{"n", i}});
  CHECK(fast->Next(1s).frames.size() == 4);  // its bound too: 3, 2 lost, and the state again
  EventHub::Subscription::Batch batch = slow->Next(1s);
  CHECK(batch.dropped == 2);
  std::string text;
  for (const EventFrame& f : batch.frames) text += *f;
  // Its initial state, 3 of the 5, then the state again (what it lost may have been one).
  CHECK(Types(ParseEvents(text)) ==
        std::vector<std::string>{"modelStatus", "logData", "logData", "logData", "modelStatus"});
  CHECK(hub.dropped() == 4);
  CHECK_THAT(EventMetricsText(hub), Catch::Contains("swapd_events_dropped_total 4\n") &&
                                        Catch::Contains("swapd_event_readers 2\n"));
}

TEST_CASE("modelStatus lists every model as llama-swap does, then the peers' models",
          "[unit][events]") {
  TempDir tmp;
  LoadOptions options;
  options.config_path = tmp.Write("config.yaml", R"(
models:
  b-plain:
    cmd: fake --port ${PORT}
    unlisted: true
  a-vision:
    cmd: fake --port ${PORT}
    name: Vision
    description: sees
    aliases: [eyes]
    capabilities: {in: [text, image], out: [text], context: 4096}
peers:
  far:
    proxy: http://127.0.0.1:9
    models: [big]
)");
  LoadResult loaded = LoadConfig(options);
  REQUIRE(loaded.ok());
  ModelSnapshot failed;
  failed.id = "b-plain";
  failed.backend.state = BackendState::kFailed;
  failed.backend.last_error = "exit code 3";
  ModelSnapshot ready;
  ready.id = "a-vision";
  ready.backend.state = BackendState::kReady;
  json status = ModelStatusJson(*loaded.config, {failed, ready});
  REQUIRE(status.size() == 3);
  CHECK(status[0] == json{{"id", "a-vision"},
                          {"name", "Vision"},
                          {"description", "sees"},
                          {"state", "ready"},
                          {"unlisted", false},
                          {"peerID", ""},
                          {"aliases", {"eyes"}},
                          {"capabilities",
                           {{"vision", true},
                            {"audio_transcriptions", false},
                            {"audio_speech", false},
                            {"image_generation", false},
                            {"image_to_image", false},
                            {"function_calling", false},
                            {"reranker", false}}},
                          {"context_length", 4096}});
  CHECK(status[1]["id"] == "b-plain");
  CHECK(status[1]["state"] == "stopped");  // llama-swap has no "failed"
  CHECK(status[1]["last_error"] == "exit code 3");
  CHECK(status[1]["unlisted"] == true);
  CHECK(status[2] == json{{"id", "far/big"},
                          {"name", ""},
                          {"description", ""},
                          {"state", ""},
                          {"unlisted", false},
                          {"peerID", "far"}});
}

std::string StateOf(const Event& e, const std::string& model) {
  if (e.type != "modelStatus") return "";
  for (const json& m : e.data) {
    if (m["id"] == model) return m["state"];
  }
  return "";
}

TEST_CASE("GET /api/events: history and states on connect, then a load as it happens",
          "[integration][events]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("ev-m", port, "--load-ms 600 --log-lines 2") +
                          FakeModelYaml("ev-n", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  EventStream stream(url);
  REQUIRE(stream.Opened());
  REQUIRE(stream.WaitFor([](const Event& e) { return e.type == "inflight"; }));
  std::vector<Event> first = stream.Events();
  REQUIRE(first.size() >= 6);
  // llama-swap's order.
  CHECK(Types({first.begin(), first.begin() + 6}) ==
        std::vector<std::string>{"logData", "logData", "modelStatus", "uiConfig", "profileChanged",
                                 "inflight"});
  CHECK(first[0].data["source"] == "proxy");
  CHECK_THAT(first[0].data["data"].get<std::string>(), Catch::Contains("swapd listening on"));
  CHECK(first[1].data["source"] == "upstream");
  CHECK(StateOf(first[2], "ev-m") == "stopped");
  CHECK(first[3].data ==
        json{{"activity", {{"session_id", {"X-Session-ID", "X-Litellm-Session-Id"}}}}});
  CHECK(first[4].data == json{{"active", nullptr}});
  CHECK(first[5].data == json{{"operation", "snapshot"}, {"requests", json::array()}});

  HttpReply reply =
      HttpPost(url, "/v1/chat/completions", ChatBody("ev-m", false), "application/json", 60s);
  CHECK(reply.status == 200);
  REQUIRE(stream.WaitFor([](const Event& e) {
    return e.type == "loading" && e.data["model"] == "ev-m" && e.data["stage"] == "ready";
  }));
  REQUIRE(stream.WaitFor([](const Event& e) { return StateOf(e, "ev-m") == "ready"; }));
  // The request is in the history: its row's id (GET /api/metrics/activity has it).
  REQUIRE(stream.WaitFor([](const Event& e) {
    return e.type == "activity" && e.data == json{{"id", 1}};
  }));
  // Each state once, in order; the loading events with it; the backend's lines as upstream.
  std::vector<std::string> states;
  std::vector<json> loads;
  bool upstream_line = false;
  for (const Event& e : stream.Events()) {
    std::string state = StateOf(e, "ev-m");
    if (!state.empty() && (states.empty() || states.back() != state)) states.push_back(state);
    if (e.type == "loading") loads.push_back(e.data);
    if (e.type == "logData" && e.data["source"] == "upstream" &&
        e.data["data"].get<std::string>().find("[ev-m] llama_model_loader") != std::string::npos) {
      upstream_line = true;
    }
  }
  CHECK(states == std::vector<std::string>{"stopped", "starting", "ready"});
  REQUIRE(loads.size() >= 2);
  CHECK(loads.front() == json{{"model", "ev-m"},
                              {"stage", "starting"},
                              {"progress", nullptr},
                              {"eta_seconds", nullptr}});  // no load of it known yet
  CHECK(loads.back()["progress"] == 1.0);
  CHECK(upstream_line);

  // A second load is measured against the first: progress and an ETA from the start on.
  REQUIRE(HttpPost(url, "/api/models/unload/ev-m", "", "application/json", 60s).status == 200);
  REQUIRE(stream.WaitFor([](const Event& e) { return StateOf(e, "ev-m") == "stopped"; }));
  CHECK(stream.WaitFor([](const Event& e) {
    return e.type == "stopping" && e.data == json{{"model", "ev-m"}, {"reason", "unload"}};
  }));
  size_t seen = stream.Events().size();
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("ev-m", false), "application/json", 60s)
            .status == 200);
  // (Its stage: "starting", then what the backend's output says: metadata, tensors, ...)
  auto under_way = [](const Event& e) {
    return e.type == "loading" && e.data["stage"] != "ready" && e.data["stage"] != "failed";
  };
  REQUIRE(stream.WaitFor(
      [&](const Event& e) { return under_way(e) && e.data["eta_seconds"].is_number(); }));
  std::vector<Event> all = stream.Events();
  for (size_t i = seen; i < all.size(); ++i) {
    if (!under_way(all[i]) || !all[i].data["eta_seconds"].is_number()) continue;
    CHECK(all[i].data["progress"].get<double>() >= 0.0);
    CHECK(all[i].data["progress"].get<double>() < 1.0);
    CHECK(all[i].data["eta_seconds"].get<double>() >= 0.0);
  }

  // Another model of the (default) group makes room: the stop says why.
  seen = stream.Count();
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("ev-n", false), "application/json", 60s)
            .status == 200);
  CHECK(stream.WaitFor(
      [](const Event& e) {
        return e.type == "stopping" && e.data == json{{"model", "ev-m"}, {"reason", "group"}};
      },
      seen));
}

TEST_CASE("GET /api/events: a reader that never reads loses events; swapd keeps serving",
          "[integration][events]") {
  int port = FreeLoopbackPort();
  // A start writes 40000 log lines: more events than a reader's queue (1024) and its socket (the
  // kernel's send buffer grows up to 4 MiB) hold.
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("ev-loud", port, "--log-lines 40000"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  const int swapd_port = std::stoi(url.substr(url.rfind(':') + 1));

  RawConnection stuck(swapd_port, 4096);
  REQUIRE(stuck.connected());
  REQUIRE(stuck.Send("GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n"));
  REQUIRE(WaitFor([&] {
    return HttpGet(url, "/metrics").body.find("swapd_event_readers 1\n") != std::string::npos;
  }));
  EventStream live(url);
  REQUIRE(live.Opened());

  HttpReply reply =
      HttpPost(url, "/v1/chat/completions", ChatBody("ev-loud", false), "application/json", 60s);
  CHECK(reply.status == 200);
  // The stuck reader lost events (counted). One that reads may lose some of such a burst too, but
  // the states are sent again after a loss: it learns that the model is ready.
  CHECK(WaitFor([&] {
    std::string metrics = HttpGet(url, "/metrics").body;
    return metrics.find("swapd_events_dropped_total 0\n") == std::string::npos &&
           metrics.find("swapd_events_dropped_total") != std::string::npos;
  }));
  CHECK(live.WaitFor([](const Event& e) { return StateOf(e, "ev-loud") == "ready"; }));
  CHECK(HttpPost(url, "/v1/chat/completions", ChatBody("ev-loud", false), "application/json", 60s)
            .status == 200);
  // Nor does it hold up a shutdown (its write would wait 60 s for the reader).
  REQUIRE(swapd.value().process->Signal(SIGTERM));
  auto exited = swapd.value().process->WaitForExit(30s);
  REQUIRE(exited.has_value());
  CHECK(exited->ExitedWith(0));
}

TEST_CASE("An open /api/events stream ends when swapd shuts down", "[integration][events]") {
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("ev-idle", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  EventStream stream(swapd.value().base_url);
  REQUIRE(stream.Opened());
  REQUIRE(stream.WaitFor([](const Event& e) { return e.type == "profileChanged"; }));
  REQUIRE(swapd.value().process->Signal(SIGTERM));
  CHECK(stream.Ended(30s));
  auto exited = swapd.value().process->WaitForExit(30s);
  REQUIRE(exited.has_value());
  CHECK(exited->ExitedWith(0));
}

}  // namespace
}  // namespace swapd::testing
