// Integration tests of the parts of a model llama-swap added in 2026, with the real swapd and
// fake backends: filters.setParamsByID (its keys are aliases; its params follow setParams),
// capabilities in /v1/models, owned_by, and a per-model healthCheckTimeout that applies.
#include <httplib.h>
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// The body the fake backend of `model` saw last.
json LastBody(const std::string& url, const std::string& model) {
  HttpReply last = HttpGet(url, "/upstream/" + model + "/last-request");
  REQUIRE(last.status == 200);
  return json::parse(json::parse(last.body)["body"].get<std::string>());
}

TEST_CASE("setParamsByID: each key is an alias whose params follow setParams",
          "[integration][front][parity]") {
  int port = FreeLoopbackPort();
  std::string yaml = "models:\n" + FakeModelYaml("pb-m", port, "",
                                                 "    filters:\n"
                                                 "      setParams: {effort: low, top_k: 5}\n"
                                                 "      setParamsByID:\n"
                                                 "        \"${MODEL_ID}\": {top_k: 9}\n"
                                                 "        \"${MODEL_ID}:high\":\n"
                                                 "          effort: high\n"
                                                 "          chat_template_kwargs:\n"
                                                 "            reasoning_effort: high\n");
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  auto chat = [&](const std::string& model) {
    return HttpPost(url, "/v1/chat/completions",
                    R"({"model":")" + model +
                        R"(","max_tokens":2,"messages":[{"role":"user","content":"hi"}]})")
        .status;
  };

  REQUIRE(chat("pb-m") == 200);
  json plain = LastBody(url, "pb-m");
  CHECK(plain["effort"] == "low");
  CHECK(plain["top_k"] == 9);  // the model's own id has params too, set after setParams
  CHECK_FALSE(plain.contains("chat_template_kwargs"));

  REQUIRE(chat("pb-m:high") == 200);
  json high = LastBody(url, "pb-m");
  CHECK(high["model"] == "pb-m:high");  // the model field is never set by params
  CHECK(high["effort"] == "high");
  CHECK(high["top_k"] == 5);
  CHECK(high["chat_template_kwargs"]["reasoning_effort"] == "high");

  // Still one backend: the key is an alias of the same model.
  CHECK(PidsWithArg("--model pb-m ").size() == 1);
  HttpReply unknown = HttpPost(url, "/v1/chat/completions", R"({"model":"pb-m:low"})");
  CHECK(unknown.status == 404);
}

TEST_CASE("/v1/models: owned_by llama-swap and capabilities as llama-swap renders them",
          "[integration][front][parity]") {
  int p1 = FreeLoopbackPort(), p2 = FreeLoopbackPort();
  std::string yaml = "macros: {ctx: 32768}\nmodels:\n" +
                     FakeModelYaml("cp-vision", p1, "",
                                   "    capabilities:\n"
                                   "      in: [text, image]\n"
                                   "      out: [text]\n"
                                   "      tools: true\n"
                                   "      context: ${ctx}\n"
                                   "    metadata: {family: gemma}\n") +
                     FakeModelYaml("cp-plain", p2);
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  HttpReply r = HttpGet(url, "/v1/models");
  REQUIRE(r.status == 200);
  json data = json::parse(r.body)["data"];
  REQUIRE(data.size() == 2);
  const json& plain = data[0];
  const json& vision = data[1];
  CHECK(plain["id"] == "cp-plain");
  CHECK(plain["owned_by"] == "llama-swap");
  CHECK_FALSE(plain.contains("capabilities"));
  CHECK(vision["owned_by"] == "llama-swap");
  CHECK(vision["architecture"] == json{{"input_modalities", {"text", "image"}},
                                       {"output_modalities", {"text"}},
                                       {"modality", "text+image->text"}});
  CHECK(vision["capabilities"]["vision"] == true);
  CHECK(vision["capabilities"]["function_calling"] == true);
  CHECK(vision["capabilities"]["audio_speech"] == false);
  CHECK(vision["supported_parameters"] == json{"tools", "tool_choice"});
  CHECK(vision["context_length"] == 32768);
  CHECK(vision["meta"]["n_ctx"] == 32768);
  CHECK(vision["meta"]["llamaswap"]["family"] == "gemma");
}

TEST_CASE("a model's own healthCheckTimeout applies, not the top-level one",
          "[integration][front][parity]") {
  int p1 = FreeLoopbackPort(), p2 = FreeLoopbackPort();
  // Both backends take 4 s to turn ready; the top level allows 60 s, the impatient model 1 s.
  std::string yaml =
      "healthCheckTimeout: 60\nmodels:\n" +
      FakeModelYaml("hc-impatient", p1, "--load-ms 4000", "    healthCheckTimeout: 1\n") +
      FakeModelYaml("hc-patient", p2, "--load-ms 4000");
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  HttpReply failed = HttpPost(url, "/v1/completions", R"({"model":"hc-impatient","prompt":"x"})",
                              "application/json", 60s);
  CHECK(failed.status >= 500);
  CHECK_THAT(failed.body, Catch::Contains("1s (healthCheckTimeout"));
  HttpReply ok = HttpPost(url, "/v1/completions", R"({"model":"hc-patient","prompt":"x"})",
                          "application/json", 60s);
  CHECK(ok.status == 200);
}

TEST_CASE("/v1/models: ownedBy replaces owned_by", "[integration][front][parity]") {
  auto swapd =
      StartSwapd("ownedBy: homelab\nmodels:\n" + FakeModelYaml("ob-m", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  json data = json::parse(HttpGet(swapd.value().base_url, "/v1/models").body)["data"];
  REQUIRE(data.size() == 1);
  CHECK(data[0]["owned_by"] == "homelab");
}

TEST_CASE("a model's timeouts.responseHeader bounds the wait for its answer",
          "[integration][front][parity]") {
  int port = FreeLoopbackPort();
  std::string yaml =
      "models:\n" +
      FakeModelYaml("rh-model", port, "", "    timeouts: {responseHeader: 1, idleConn: 0}\n");
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());
  REQUIRE(HttpPost(url, "/v1/completions", R"({"model":"rh-model","prompt":"x"})",
                   "application/json", 60s)
              .status == 200);
  // The backend takes 20 s to answer; the model allows 1 s for the head: a 504 long before.
  const auto start = std::chrono::steady_clock::now();
  HttpReply slow = HttpGet(url, "/upstream/rh-model/slow?ms=20000", 30s);
  CHECK(slow.status == 504);
  CHECK_THAT(slow.body, Catch::Contains("model \\\"rh-model\\\"") &&
                            Catch::Contains("nothing for 1 s (timeouts.responseHeader)"));
  CHECK(std::chrono::steady_clock::now() - start < 15s);
  // A quick answer still goes through.
  CHECK(HttpGet(url, "/upstream/rh-model/health").status == 200);
}

}  // namespace
}  // namespace swapd::testing
