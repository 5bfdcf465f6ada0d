// Integration test of profiles: the real swapd with fake backends. None is active at start and
// after a reload; PUT /api/profiles/active switches them; pins rewrite ids in requests, in
// /upstream and in /v1/models; an empty pin makes an id unknown.
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

HttpReply Put(const std::string& url, const std::string& path, const std::string& body) {
  httplib::Client client(url);
  client.set_read_timeout(30, 0);
  auto res = client.Put(path.c_str(), body, "application/json");
  HttpReply reply;
  if (res) {
    reply.status = res->status;
    reply.body = res->body;
  }
  return reply;
}

// The model the fake backend behind `id` says it serves, through /upstream.
std::string ServedBy(const std::string& url, const std::string& id) {
  HttpReply r = HttpGet(url, "/upstream/" + id + "/v1/models");
  if (r.status != 200) return "status " + std::to_string(r.status);
  return json::parse(r.body)["data"][0]["id"].get<std::string>();
}

TEST_CASE("profiles switch pins at runtime and reset on reload", "[integration][front][profiles]") {
  int p1 = FreeLoopbackPort(), p2 = FreeLoopbackPort();
  std::string yaml = "models:\n" + FakeModelYaml("pf-big", p1) +
                     FakeModelYaml("pf-small", p2, "", "    aliases: [pf-tiny]\n") +
                     "profiles:\n"
                     "  coding:\n"
                     "    description: the big model writes code\n"
                     "    pins: {llm-code: pf-big, pf-tiny: ~}\n"
                     "  light:\n"
                     "    pins: {llm-code: pf-tiny}\n";
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  // None active at start: the pin's id is unknown, the alias works.
  HttpReply listed = HttpGet(url, "/api/profiles");
  REQUIRE(listed.status == 200);
  json profiles = json::parse(listed.body);
  CHECK(profiles["active"].is_null());
  REQUIRE(profiles["profiles"].size() == 2);
  CHECK(profiles["profiles"][0]["id"] == "coding");
  CHECK(profiles["profiles"][0]["pins"] == json{{"llm-code", "pf-big"}, {"pf-tiny", nullptr}});
  CHECK(ChatStatus(url, "llm-code") == 404);
  CHECK(ChatStatus(url, "pf-tiny") == 200);

  REQUIRE(Put(url, "/api/profiles/active", R"({"name":"coding"})").status == 200);
  CHECK(json::parse(HttpGet(url, "/api/profiles").body)["active"] == "coding");
  CHECK(ChatStatus(url, "llm-code") == 200);
  CHECK(ServedBy(url, "llm-code") == "pf-big");
  CHECK(ChatStatus(url, "pf-tiny") == 404);   // disabled while coding is active
  CHECK(ChatStatus(url, "pf-small") == 200);  // model ids always win
  json data = json::parse(HttpGet(url, "/v1/models").body)["data"];
  std::vector<std::string> ids;
  for (const auto& m : data) ids.push_back(m["id"]);
  CHECK(ids == std::vector<std::string>{"llm-code", "pf-big", "pf-small"});
  CHECK(data[0]["meta"]["llamaswap"]["type"] == "profile");
  CHECK(data[0]["meta"]["llamaswap"]["target"] == "pf-big");

  REQUIRE(Put(url, "/api/profiles/active", R"({"name":"light"})").status == 200);
  CHECK(ServedBy(url, "llm-code") == "pf-small");
  CHECK(ChatStatus(url, "pf-tiny") == 200);

  // Bad switches change nothing.
  CHECK(Put(url, "/api/profiles/active", R"({"name":"nope"})").status == 404);
  CHECK(Put(url, "/api/profiles/active", R"({"profile":"light"})").status == 400);
  CHECK(Put(url, "/api/profiles/active", "not json").status == 400);
  CHECK(json::parse(HttpGet(url, "/api/profiles").body)["active"] == "light");

  // A reload leaves no profile active.
  REQUIRE(HttpPost(url, "/api/config/reload", "").status == 200);
  CHECK(WaitFor([&] { return json::parse(HttpGet(url, "/api/profiles").body)["active"].is_null(); },
                20s));
  CHECK(ChatStatus(url, "llm-code") == 404);

  REQUIRE(Put(url, "/api/profiles/active", R"({"name":"coding"})").status == 200);
  REQUIRE(Put(url, "/api/profiles/active", R"({"name":null})").status == 200);
  CHECK(ChatStatus(url, "llm-code") == 404);
}

}  // namespace
}  // namespace swapd::testing
