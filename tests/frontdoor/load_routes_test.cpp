// llama.cpp's router API with the real swapd and fake backends, used as the pi coding agent's
// llama.cpp provider uses it: POST /models/load, then GET /models until the status is "loaded"
// (or failed, with the exit code); POST /models/unload, then until "unloaded".
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// The `status` of `id` in GET /models (null when it is not listed).
json StatusOf(const std::string& url, const std::string& id) {
  HttpReply reply = HttpGet(url, "/models");
  if (reply.status != 200) return nullptr;
  const json list = json::parse(reply.body);
  for (const json& m : list["data"]) {
    if (m["id"] == id) return m["status"];
  }
  return nullptr;
}

HttpReply Post(const std::string& url, const std::string& path, const std::string& body) {
  return HttpPost(url, path, body, "application/json", 30s);
}

TEST_CASE("POST /models/load and /models/unload, polled through GET /models",
          "[integration][front][load]") {
  auto swapd = StartSwapd(
      "models:\n" +
      FakeModelYaml("ld-m", FreeLoopbackPort(), "--load-ms 800", "    aliases: [ld-alias]\n") +
      FakeModelYaml("ld-bad", FreeLoopbackPort(), "--exit-during-load 7") +
      "peers:\n  far:\n    proxy: http://127.0.0.1:9\n    models: [big]\n");
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  CHECK(StatusOf(url, "ld-m") == json{{"value", "unloaded"}});

  HttpReply loaded = Post(url, "/models/load", R"({"model": "ld-alias"})");
  CHECK(loaded.status == 200);
  CHECK(json::parse(loaded.body) == json{{"success", true}});
  // Answered at once; the load goes on (800 ms of it): loading, then loaded.
  CHECK(WaitFor([&] { return StatusOf(url, "ld-m")["value"] == "loading"; }, 30s, 10ms));
  CHECK(WaitFor([&] { return StatusOf(url, "ld-m") == json{{"value", "loaded"}}; }));
  CHECK(StatusOf(url, "ld-alias") == nullptr);  // aliases are not listed by default

  CHECK(Post(url, "/models/unload", R"({"model": "ld-m"})").status == 200);
  CHECK(WaitFor([&] { return StatusOf(url, "ld-m") == json{{"value", "unloaded"}}; }));
  // Unloading what is not loaded is no error.
  CHECK(Post(url, "/models/unload", R"({"model": "ld-m"})").status == 200);

  // A load that fails: unloaded, failed, and the process's exit code.
  CHECK(Post(url, "/models/load", R"({"model": "ld-bad"})").status == 200);
  CHECK(WaitFor([&] {
    return StatusOf(url, "ld-bad") ==
           json{{"value", "unloaded"}, {"failed", true}, {"exit_code", 7}};
  }));

  struct Bad {
    const char* body;
    int status;
    const char* says;
  };
  for (const Bad& bad :
       {Bad{"", 400, "expected {\"model\""}, Bad{"{}", 400, "expected"},
        Bad{R"({"model": 3})", 400, "expected"}, Bad{R"({"model": "nope"})", 404, "nope"},
        Bad{R"({"model": "far/big"})", 400, "peer \"far\""}}) {
    INFO(bad.body);
    HttpReply reply = Post(url, "/models/load", bad.body);
    CHECK(reply.status == bad.status);
    CHECK_THAT(json::parse(reply.body)["error"]["message"].get<std::string>(),
               Catch::Contains(bad.says));
  }
}

}  // namespace
}  // namespace swapd::testing
