// Tests of GET /api/events against the real swapd with fake backends: the history and states on
// connect, a model's status and loading events live, a flood of log lines with a reader that never
// reads (swapd keeps serving and shuts down), the end of an open stream at shutdown. EventHub,
// LogEvents and ActivityEvents on their own: tests/observe/events_test.cpp.
#include <signal.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/event_stream.h"
#include "tests/support/http_wait.h"
#include "tests/support/raw_connection.h"
#include "tests/support/swapd_process.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

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

TEST_CASE(
    "GET /api/events: a flood of log lines is cut; a reader that never reads holds up nothing",
    "[integration][events]") {
  int port = FreeLoopbackPort();
  // A start writes 40000 log lines, faster than the live log's allowance: most are not sent to
  // the readers (counted), and a reader that never reads holds up nothing.
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("ev-loud", port, "--log-lines 40000"));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  const int swapd_port = swapd.value().port;

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
  CHECK(WaitFor([&] {
    std::string metrics = HttpGet(url, "/metrics").body;
    return metrics.find("swapd_events_log_lines_skipped_total 0\n") == std::string::npos &&
           metrics.find("swapd_events_log_lines_skipped_total") != std::string::npos;
  }));
  CHECK(live.WaitFor([](const Event& e) {
    return e.type == "logData" &&
           e.data["data"].get<std::string>().find("log lines not sent live") != std::string::npos;
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
