// Integration test of selectors with the real swapd and fake backends: warm prefers the target
// that runs, spillover spreads concurrent streams over targets that run together, and both are
// listed in /v1/models with their strategy and targets.
#include <httplib.h>
#include <catch2/catch.hpp>

#include <future>
#include <nlohmann/json.hpp>

#include "tests/support/http_wait.h"
#include "tests/support/latch.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

int Complete(const std::string& url, const std::string& model) {
  return HttpPost(url, "/v1/completions", R"({"model":")" + model + R"(","prompt":"x"})",
                  "application/json", 60s)
      .status;
}

// The model field of the last request the backend of `model` saw ("" when it saw none).
std::string LastAskedFor(const std::string& url, const std::string& model) {
  HttpReply last = HttpGet(url, "/upstream/" + model + "/last-request");
  if (last.status != 200) return "";
  json body = json::parse(json::parse(last.body)["body"].get<std::string>(), nullptr, false);
  return body.is_object() ? body.value("model", "") : "";
}

TEST_CASE("warm and spillover selectors pick their targets", "[integration][front][selectors]") {
  int p1 = FreeLoopbackPort(), p2 = FreeLoopbackPort();
  std::string yaml = "models:\n" + FakeModelYaml("sl-a", p1, "--tokens-per-second 50") +
                     FakeModelYaml("sl-b", p2, "--tokens-per-second 50") +
                     "groups:\n  pair: {swap: false, exclusive: true, members: [sl-a, sl-b]}\n"
                     "selectors:\n"
                     "  sl-warm: {strategy: warm, targets: [sl-a, sl-b], name: Warm}\n"
                     "  sl-spill:\n"
                     "    strategy: spillover\n"
                     "    targets: [sl-a, sl-b]\n"
                     "    settings: {spillover: 1}\n";
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  json data = json::parse(HttpGet(url, "/v1/models").body)["data"];
  REQUIRE(data.size() == 4);
  CHECK(data[2]["id"] == "sl-spill");
  CHECK(data[2]["meta"]["llamaswap"] == json{{"type", "selector"},
                                             {"strategy", "spillover"},
                                             {"targets", {"sl-a", "sl-b"}},
                                             {"spillover", 1}});
  CHECK(data[3]["name"] == "Warm");
  CHECK(data[3]["status"]["value"] == "unloaded");

  // Warm: nothing runs, so the first target; once sl-b alone runs, sl-b.
  REQUIRE(Complete(url, "sl-b") == 200);
  REQUIRE(Complete(url, "sl-warm") == 200);
  CHECK(LastAskedFor(url, "sl-b") == "sl-warm");
  CHECK(PidsWithArg("--model sl-a ").empty());
  CHECK(json::parse(HttpGet(url, "/v1/models").body)["data"][3]["status"]["value"] == "loaded");

  // Spillover: two streams at once, each waiting on its first chunk for the other's: they can
  // only both get there on different targets (spillover 1 each).
  Latch first, second;
  auto stream = [&](Latch& mine, Latch& other) {
    bool waited = false;
    return StreamPost(url, "/v1/chat/completions", ChatBody("sl-spill", true, 20),
                      [&](const std::string&) {
                        if (!waited) {
                          waited = true;
                          mine.Raise();
                          return other.Wait(60s);
                        }
                        return true;
                      });
  };
  auto one = std::async(std::launch::async, stream, std::ref(first), std::ref(second));
  REQUIRE(first.Wait(60s));  // the first holds a target before the second is chosen
  auto two = std::async(std::launch::async, stream, std::ref(second), std::ref(first));
  StreamedReply a = one.get(), b = two.get();
  CHECK(a.status == 200);
  CHECK(b.status == 200);
  CHECK(LastAskedFor(url, "sl-a") == "sl-spill");
  CHECK(LastAskedFor(url, "sl-b") == "sl-spill");

  // Selectors are not reachable through /upstream.
  CHECK(HttpGet(url, "/upstream/sl-warm/health").status == 404);
}

}  // namespace
}  // namespace swapd::testing
