// Integration test of the matrix router: the real swapd binary and fake-llama-server backends.
// Models of one set run together; a load evicts the cheapest way out, several models at once;
// each decision is logged with its set, evictions and cost.
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

std::set<std::string> ReadyModels(const std::string& base_url) {
  HttpReply r = HttpGet(base_url, "/running");
  REQUIRE(r.status == 200);
  const json running = json::parse(r.body)["running"];
  std::set<std::string> ready;
  for (const auto& m : running) {
    if (m["state"] == "ready") ready.insert(m["model"].get<std::string>());
  }
  return ready;
}

TEST_CASE("the matrix keeps a set together and evicts the cheapest way, all at once",
          "[integration][front][matrix]") {
  int p1 = FreeLoopbackPort(), p2 = FreeLoopbackPort(), p3 = FreeLoopbackPort(),
      p4 = FreeLoopbackPort();
  std::string yaml = "models:\n" + FakeModelYaml("mx-big", p1) + FakeModelYaml("mx-small", p2) +
                     FakeModelYaml("mx-voice", p3) + FakeModelYaml("mx-solo", p4) +
                     "routing:\n"
                     "  router:\n"
                     "    use: matrix\n"
                     "    settings:\n"
                     "      matrix:\n"
                     "        vars: {b: mx-big, s: mx-small, v: mx-voice}\n"
                     "        evict_costs: {b: 10}\n"
                     "        sets:\n"
                     "          chat: \"(b | s) & v\"\n"
                     "          pair: \"b & s\"\n";
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  auto logged = [&](const std::string& line) {
    return WaitFor([&] { return swapd.value().process->Output().find(line) != std::string::npos; },
                   10s);
  };

  REQUIRE(ChatStatus(url, "mx-big") == 200);
  REQUIRE(ChatStatus(url, "mx-voice") == 200);
  CHECK(ReadyModels(url) == std::set<std::string>{"mx-big", "mx-voice"});

  // mx-small fits with mx-voice (evicting mx-big, cost 10) or with mx-big (evicting mx-voice,
  // cost 1): the cheaper keeps the big model.
  REQUIRE(ChatStatus(url, "mx-small") == 200);
  CHECK(NoneWithArgWithin("--model mx-voice "));
  CHECK(ReadyModels(url) == std::set<std::string>{"mx-big", "mx-small"});
  CHECK(logged("matrix: model=mx-small set=pair dsl=\"b & s\" evict=[mx-voice] cost=1"));

  // mx-solo is in no set: it runs alone, and both residents stop (in one batch).
  REQUIRE(ChatStatus(url, "mx-solo") == 200);
  CHECK(NoneWithArgWithin("--model mx-big "));
  CHECK(NoneWithArgWithin("--model mx-small "));
  CHECK(ReadyModels(url) == std::set<std::string>{"mx-solo"});
  CHECK(logged("matrix: model=mx-solo is in no set, runs alone: evict=[mx-big, mx-small] cost=11"));
}

}  // namespace
}  // namespace swapd::testing
