// Residency end to end: the real swapd with fake backends. A model's minResidency keeps it loaded
// against the group rules (503 + Retry-After, or a wait that ends with the residency), and
// `prefetch: true` reads its model files into the page cache before its process starts.
#include <httplib.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::string StateOf(const SwapdInstance& swapd, const std::string& id) {
  HttpReply reply = HttpGet(swapd.base_url, "/api/models");
  REQUIRE(reply.status == 200);
  const json api = json::parse(reply.body);
  for (const json& m : api["models"]) {
    if (m["id"] == id) return m["state"].get<std::string>();
  }
  FAIL("no model " << id << " in /api/models");
  return "";
}

// Two models of the default group, which swaps them; `a` has a minimum residency.
std::string TwoModels(int residency_seconds, const std::string& top = "") {
  return top + "models:\n" +
         FakeModelYaml("a", FreeLoopbackPort(), "",
                       "    minResidency: " + std::to_string(residency_seconds) + "\n") +
         FakeModelYaml("b", FreeLoopbackPort());
}

TEST_CASE("minResidency: a swap that would stop the model early gets 503 + Retry-After",
          "[integration][memory][residency]") {
  auto swapd = StartSwapd(TwoModels(600));
  REQUIRE(swapd.ok());
  const SwapdInstance& s = swapd.value();
  HttpReply a = HttpPost(s.base_url, "/v1/chat/completions", ChatBody("a", false));
  INFO(a.Describe());
  REQUIRE(a.status == 200);

  httplib::Client client(s.base_url);
  client.set_read_timeout(30, 0);
  auto b = client.Post("/v1/chat/completions", ChatBody("b", false), "application/json");
  REQUIRE(b);
  CHECK(b->status == 503);
  const int retry_after = std::stoi(b->get_header_value("Retry-After"));
  CHECK(retry_after > 500);  // the rest of the 600 s residency, not a guess
  CHECK(retry_after <= 600);
  const json doc = json::parse(b->body);
  CHECK_THAT(doc["error"]["message"].get<std::string>(),
             Catch::Contains("\"a\"") && Catch::Contains("minResidency: 600 s"));
  CHECK(StateOf(s, "a") == "ready");
  CHECK(StateOf(s, "b") == "stopped");
  // /api/models shows the setting.
  const json api = json::parse(HttpGet(s.base_url, "/api/models").body);
  for (const json& m : api["models"]) {
    if (m["id"] == "a") CHECK(m["memory"]["min_residency_seconds"] == 600);
  }
}

TEST_CASE("minResidency with onProtected: wait: the swap happens once the residency ends",
          "[integration][memory][residency]") {
  auto swapd = StartSwapd(TwoModels(2, "memory:\n  onProtected: wait\n"));
  REQUIRE(swapd.ok());
  const SwapdInstance& s = swapd.value();
  HttpReply a = HttpPost(s.base_url, "/v1/chat/completions", ChatBody("a", false));
  INFO(a.Describe());
  REQUIRE(a.status == 200);
  HttpReply b =
      HttpPost(s.base_url, "/v1/chat/completions", ChatBody("b", false), "application/json", 60s);
  INFO(b.Describe());
  CHECK(b.status == 200);
  CHECK(StateOf(s, "a") == "stopped");
  const std::string logs = HttpGet(s.base_url, "/logs").body;
  CHECK_THAT(logs, Catch::Contains("minResidency: 2 s") && Catch::Contains("(waiting)"));
  CHECK_THAT(logs, Catch::Contains("model a: stopping (group)"));
}

}  // namespace
}  // namespace swapd::testing
