// Integration tests of what llama-swap's own web UI calls and swapd answered differently
// (issue 43), with the real swapd and fake backends: /api/hardware and /api/performance,
// meta.llamaswap in /v1/models, the JSON answer of POST /api/models/unload, modelStatus after a
// profile change, and activity rows for model POSTs only.
#include <httplib.h>
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/support/event_stream.h"
#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

json JsonOf(const HttpReply& reply) {
  INFO(reply.Describe());
  REQUIRE(reply.status == 200);
  return json::parse(reply.body);
}

TEST_CASE("llama-swap UI: hardware, performance, meta.llamaswap and the unload answers",
          "[integration][api][routes]") {
  int pa = FreeLoopbackPort(), pb = FreeLoopbackPort();
  std::string yaml = "includeAliasesInList: true\nmodels:\n" +
                     FakeModelYaml("ui-a", pa, "",
                                   "    aliases: [ui-alpha, ui-first]\n"
                                   "    metadata: {family: fake}\n") +
                     FakeModelYaml("ui-b", pb);
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  json hw = JsonOf(HttpGet(url, "/api/hardware"));
  CHECK(hw["schema_version"] == 1);
  CHECK(hw["capture"]["detector"]["name"] == "swapd");
  CHECK(hw["operating_system"]["family"] == "linux");
  CHECK(hw["cpu"]["logical_thread_count"].get<int>() > 0);
  CHECK(hw["memory"]["capacity_bytes"].get<uint64_t>() > 0);
  CHECK(hw["accelerators"].is_array());

  // Sampling is on by default (its samples: tests/api/performance_test.cpp).
  json perf = JsonOf(HttpGet(url, "/api/performance"));
  CHECK(perf["enabled"] == true);
  CHECK(perf["sys_stats"].is_array());

  json data = JsonOf(HttpGet(url, "/v1/models"))["data"];
  std::map<std::string, json> by_id;
  for (const json& item : data) by_id[item["id"]] = item;
  CHECK(by_id["ui-a"]["meta"]["llamaswap"] ==
        json{{"family", "fake"}, {"type", "model"}, {"aliases", {"ui-alpha", "ui-first"}}});
  CHECK(by_id["ui-b"]["meta"]["llamaswap"] == json{{"type", "model"}});
  CHECK(by_id["ui-alpha"]["meta"]["llamaswap"] ==
        json{{"family", "fake"}, {"type", "alias"}, {"modelID", "ui-a"}});

  REQUIRE(ChatStatus(url, "ui-a") == 200);
  HttpReply all = HttpPost(url, "/api/models/unload", "", "application/json", 60s);
  CHECK(all.status == 200);
  CHECK(all.content_type == "application/json");
  CHECK(json::parse(all.body) == json{{"msg", "ok"}});
  CHECK(NoneWithArgWithin("--model ui-a "));
  // As llama-swap: the one-model unload and GET /unload answer text.
  REQUIRE(ChatStatus(url, "ui-b") == 200);
  HttpReply one = HttpPost(url, "/api/models/unload/ui-b", "", "application/json", 60s);
  CHECK(one.status == 200);
  CHECK(one.body == "OK");
  CHECK(NoneWithArgWithin("--model ui-b "));
  HttpReply get = HttpGet(url, "/unload", 60s);
  CHECK(get.status == 200);
  CHECK(get.body == "OK");
}

TEST_CASE("llama-swap UI: a profile change sends profileChanged, then modelStatus",
          "[integration][api][routes]") {
  int port = FreeLoopbackPort();
  std::string yaml = "models:\n" + FakeModelYaml("pe-m", port) +
                     "profiles:\n  coding:\n    pins: {pe-code: pe-m}\n";
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  EventStream stream(url);
  REQUIRE(stream.Opened());
  REQUIRE(stream.WaitFor([](const Event& e) { return e.type == "inflight"; }));
  const size_t before = stream.Count();
  httplib::Client client(url);
  auto put = client.Put("/api/profiles/active", R"({"name":"coding"})", "application/json");
  REQUIRE(put);
  REQUIRE(put->status == 200);
  REQUIRE(stream.WaitFor([](const Event& e) { return e.type == "modelStatus"; }, before));
  std::vector<Event> events = stream.Events();
  std::vector<Event> after(events.begin() + static_cast<std::ptrdiff_t>(before), events.end());
  std::vector<std::string> types = Types(after);
  INFO(json(types).dump());
  auto changed = std::find(types.begin(), types.end(), "profileChanged");
  REQUIRE(changed != types.end());
  CHECK(after[changed - types.begin()].data == json{{"active", "coding"}});
  CHECK(std::find(changed, types.end(), "modelStatus") != types.end());
}

json ActivityRows(const std::string& url) {
  return JsonOf(HttpGet(url, "/api/metrics/activity?sort=id&order=asc&limit=100"));
}

TEST_CASE("llama-swap UI: activity rows for model POSTs only, not for GETs or /upstream pages",
          "[integration][api][routes]") {
  int port = FreeLoopbackPort();
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("ac-m", port));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  // The UI loads a model by GET /upstream/<id>/: the start, then the backend's own page (200, as
  // llama-server's web UI). None of these GETs is a row.
  HttpReply load = HttpGet(url, "/upstream/ac-m/", 60s);
  CHECK(load.status == 200);
  CHECK(load.body.find("ac-m") != std::string::npos);
  REQUIRE(ChatStatus(url, "ac-m") == 200);
  CHECK(HttpGet(url, "/upstream/ac-m/props").status == 200);
  CHECK(HttpGet(url, "/props?model=ac-m").status == 200);
  CHECK(HttpPost(url, "/upstream/ac-m/slow?ms=1", "").status == 200);
  // A model POST through /upstream is one.
  CHECK(HttpPost(url, "/upstream/ac-m/v1/chat/completions", ChatBody("ac-m", false)).status == 200);
  REQUIRE(WaitFor([&] { return ActivityRows(url)["total"] == 2; }, 30s));
  json rows = ActivityRows(url);
  CHECK(rows["total"] == 2);
  CHECK(rows["data"][0]["req_path"] == "/v1/chat/completions");
  CHECK(rows["data"][1]["req_path"] == "/upstream/ac-m/v1/chat/completions");
}

}  // namespace
}  // namespace swapd::testing
