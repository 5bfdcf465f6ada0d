// The dashboard's routes through the real swapd: the embedded files, GET / -> /ui/, the Basic
// challenge under apiKeys, and the Groups page's API (/api/groups, /api/plan) with fake backends.
// The pages themselves are tested in a browser: tests/browser/dashboard.test.mjs.
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

// A duo (coder + helper run together) and an ungrouped writer, which the default group's
// exclusivity makes swap the duo out.
std::string DuoConfig(const std::string& writer_extra = "", const std::string& top = "") {
  return top + "models:\n" + FakeModelYaml("coder", FreeLoopbackPort(), "", "    aliases: [c]\n") +
         FakeModelYaml("helper", FreeLoopbackPort()) +
         FakeModelYaml("writer", FreeLoopbackPort(), "", writer_extra) +
         "groups:\n  duo:\n    swap: false\n    exclusive: true\n    members: [coder, helper]\n";
}

json Plan(const SwapdInstance& s, const std::string& model) {
  HttpReply reply = HttpGet(s.base_url, "/api/plan?model=" + model);
  INFO(reply.Describe());
  REQUIRE(reply.status == 200);
  return json::parse(reply.body);
}

TEST_CASE("The dashboard's files are served from the binary; / and /ui lead to /ui/",
          "[integration][ui]") {
  auto swapd = StartSwapd(DuoConfig());
  REQUIRE(swapd.ok());
  httplib::Client client(swapd.value().base_url);

  auto root = client.Get("/");
  REQUIRE(root);
  CHECK(root->status == 302);
  CHECK(root->get_header_value("Location") == "/ui/");
  auto ui = client.Get("/ui");
  REQUIRE(ui);
  CHECK(ui->status == 302);
  CHECK(ui->get_header_value("Location") == "/ui/");

  auto index = client.Get("/ui/");
  REQUIRE(index);
  CHECK(index->status == 200);
  CHECK(index->get_header_value("Content-Type") == "text/html; charset=utf-8");
  CHECK_THAT(index->body, Catch::Contains("<script type=\"module\" src=\"app.js\""));
  CHECK_THAT(index->get_header_value("Content-Security-Policy"),
             Catch::Contains("default-src 'self'"));
  auto script = client.Get("/ui/app.js");
  REQUIRE(script);
  CHECK(script->status == 200);
  CHECK(script->get_header_value("Content-Type") == "text/javascript; charset=utf-8");
  CHECK_THAT(script->body, Catch::Contains("new EventSource('/api/events')"));
  // The page modules app.js imports.
  for (const char* module : {"core.js", "models.js", "activity.js", "logs.js", "playground.js",
                             "groups.js", "scoreboard.js"}) {
    auto served = client.Get(std::string("/ui/") + module);
    REQUIRE(served);
    CHECK(served->status == 200);
    CHECK_THAT(script->body, Catch::Contains(std::string("from './") + module + "'"));
  }
  auto style = client.Get("/ui/app.css");
  REQUIRE(style);
  CHECK(style->get_header_value("Content-Type") == "text/css; charset=utf-8");
  auto icon = client.Get("/favicon.ico");
  REQUIRE(icon);
  CHECK(icon->status == 200);
  CHECK(icon->get_header_value("Content-Type") == "image/svg+xml");

  auto missing = client.Get("/ui/nothing.js");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(json::parse(missing->body)["error"]["message"] == "no dashboard file nothing.js");
  // Other unknown routes stay 404s: "/" is not a prefix route.
  auto other = client.Get("/nowhere");
  REQUIRE(other);
  CHECK(other->status == 404);
}

TEST_CASE("With apiKeys the dashboard challenges with Basic, and a key as password opens it",
          "[integration][ui]") {
  auto swapd = StartSwapd(DuoConfig("", "apiKeys: [sk-ui-test]\n"));
  REQUIRE(swapd.ok());
  httplib::Client client(swapd.value().base_url);
  auto denied = client.Get("/ui/");
  REQUIRE(denied);
  CHECK(denied->status == 401);
  CHECK(denied->get_header_value("WWW-Authenticate") == "Basic realm=\"swapd\"");
  // The API keeps its Bearer challenge.
  auto api = client.Get("/api/groups");
  REQUIRE(api);
  CHECK(api->status == 401);
  CHECK(api->get_header_value("WWW-Authenticate") == "Bearer realm=\"swapd\"");

  client.set_basic_auth("anyone", "sk-ui-test");
  auto page = client.Get("/ui/");
  REQUIRE(page);
  CHECK(page->status == 200);
  auto groups = client.Get("/api/groups");
  REQUIRE(groups);
  CHECK(groups->status == 200);
}

TEST_CASE("GET /api/groups: each group's flags and its members' states", "[integration][ui]") {
  auto swapd = StartSwapd(DuoConfig());
  REQUIRE(swapd.ok());
  const SwapdInstance& s = swapd.value();
  REQUIRE(HttpPost(s.base_url, "/v1/chat/completions", ChatBody("helper", false)).status == 200);

  HttpReply reply = HttpGet(s.base_url, "/api/groups");
  REQUIRE(reply.status == 200);
  const json groups = json::parse(reply.body)["groups"];
  REQUIRE(groups.size() == 2);
  const json& ungrouped = groups[0];  // sorted by name: "(default)" before "duo"
  CHECK(ungrouped["id"] == "(default)");
  CHECK(ungrouped["members"] == json::array({{{"id", "writer"}, {"state", "stopped"}}}));
  const json& duo = groups[1];
  CHECK(duo["id"] == "duo");
  CHECK(duo["swap"] == false);
  CHECK(duo["exclusive"] == true);
  CHECK(duo["persistent"] == false);
  CHECK(duo["members"] == json::array({{{"id", "coder"}, {"state", "stopped"}},
                                       {{"id", "helper"}, {"state", "ready"}}}));
}

TEST_CASE("GET /api/plan says what a request would stop and why, and changes nothing",
          "[integration][ui]") {
  auto swapd = StartSwapd(DuoConfig());
  REQUIRE(swapd.ok());
  const SwapdInstance& s = swapd.value();

  // Nothing runs: any model just starts.
  json plan = Plan(s, "writer");
  CHECK(plan["state"] == "stopped");
  CHECK(plan["evict"].empty());
  CHECK(plan["refused"].is_null());

  REQUIRE(HttpPost(s.base_url, "/v1/chat/completions", ChatBody("helper", false)).status == 200);
  // The other duo member runs beside it; an alias names the model.
  plan = Plan(s, "c");
  CHECK(plan["model"] == "coder");
  CHECK(plan["evict"].empty());
  // The writer is ungrouped: the default group is exclusive and stops the duo's member.
  plan = Plan(s, "writer");
  REQUIRE(plan["evict"].size() == 1);
  CHECK(plan["evict"][0]["model"] == "helper");
  CHECK_THAT(plan["evict"][0]["reason"].get<std::string>(), Catch::Contains("exclusive"));
  CHECK(plan["matrix"].is_null());
  // Asking changed nothing: helper still serves.
  plan = Plan(s, "helper");
  CHECK(plan["state"] == "ready");
  CHECK(plan["evict"].empty());

  HttpReply unknown = HttpGet(s.base_url, "/api/plan?model=nope");
  CHECK(unknown.status == 404);
  HttpReply none = HttpGet(s.base_url, "/api/plan");
  CHECK(none.status == 404);
  CHECK_THAT(none.body, Catch::Contains("?model="));
}

TEST_CASE("GET /api/plan: a protected model in the way is a refusal, with its reason",
          "[integration][ui]") {
  auto swapd = StartSwapd("models:\n" +
                          FakeModelYaml("a", FreeLoopbackPort(), "", "    swappable: false\n") +
                          FakeModelYaml("b", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const SwapdInstance& s = swapd.value();
  REQUIRE(HttpPost(s.base_url, "/v1/chat/completions", ChatBody("a", false)).status == 200);
  const json plan = Plan(s, "b");
  REQUIRE(plan["evict"].size() == 1);
  CHECK(plan["evict"][0]["model"] == "a");
  CHECK(plan["evict"][0]["reason"] == "both are in no group, and ungrouped models swap");
  REQUIRE(plan["refused"].is_string());
  CHECK_THAT(plan["refused"].get<std::string>(), Catch::Contains("swappable: false"));
}

}  // namespace
}  // namespace swapd::testing
