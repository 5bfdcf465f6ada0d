// The model routes beyond the JSON POSTs (issue 43): llama.cpp's 2026 routes dispatched by the
// JSON body's model, the GET routes by ?model=, and llama-swap's rule for a body that is not JSON
// (its form field, else ?model=). Unit tests of the table and of the query helpers; integration
// tests with the real swapd and two fake backends that echo the request they got.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "frontdoor/inference_routes.h"
#include "frontdoor/model_id.h"
#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {
namespace {

using nlohmann::json;
using ModelIn = InferenceRoute::ModelIn;

ModelIn ModelInOf(const char* method, const char* path) {
  const InferenceRoute* route = FindInferenceRoute(method, path);
  REQUIRE(route != nullptr);
  return route->model_in;
}

TEST_CASE("inference routes: where each route's model is found", "[unit][routes]") {
  CHECK(ModelInOf("POST", "/v1/chat/completions/input_tokens") == ModelIn::kJsonBody);
  CHECK(ModelInOf("POST", "/v1/responses/input_tokens") == ModelIn::kJsonBody);
  CHECK(ModelInOf("POST", "/v1/chat/completions/control") == ModelIn::kJsonBody);
  for (const char* path :
       {"/v1/audio/voices", "/v1/images/generations", "/sdapi/v1/txt2img", "/sdapi/v1/img2img"}) {
    INFO(path);
    CHECK(ModelInOf("POST", path) == ModelIn::kJsonBody);
  }
  CHECK(ModelInOf("POST", "/v1/images/edits") == ModelIn::kForm);
  CHECK(ModelInOf("POST", "/v1/audio/transcriptions") == ModelIn::kForm);
  for (const char* path : {"/v1/audio/voices", "/sdapi/v1/loras", "/props"}) {
    INFO(path);
    CHECK(ModelInOf("GET", path) == ModelIn::kQuery);
  }
  CHECK(ModelInOf("POST", "/v/chat/completions") == ModelIn::kJsonBody);
  CHECK(ModelInOf("POST", "/audioapi/v1/tasks/run") == ModelIn::kJsonBody);
  CHECK(ForwardedTarget("/v/chat/completions?x=1") == "/chat/completions?x=1");
  CHECK(ForwardedTarget("/audioapi/v1/tasks/run") == "/v1/tasks/run");
  CHECK(ForwardedTarget("/v1/chat/completions") == "/v1/chat/completions");
  CHECK(FindInferenceRoute("GET", "/v1/chat/completions") == nullptr);
  CHECK(FindInferenceRoute("POST", "/props") == nullptr);
}

TEST_CASE("urlencoded form model and ?model= rewriting", "[unit][routes]") {
  CHECK(UrlencodedFormModel("prompt=a+cat&model=sd%2Fxl&model=other") == "sd/xl");
  CHECK(UrlencodedFormModel("prompt=a&modelx=b") == "");
  CHECK(UrlencodedFormModel("") == "");
  CHECK(ReplaceQueryModel("/props?model=a&x=1", "served/b c") == "/props?model=served%2Fb%20c&x=1");
  CHECK(ReplaceQueryModel("/props?flag&model=a", "b") == "/props?flag&model=b");
  CHECK(ReplaceQueryModel("/props?x=1", "b") == "/props?x=1");
  CHECK(ReplaceQueryModel("/props", "b") == "/props");
}

// The fake backend's echo of the request, or the error.
json Echo(const HttpReply& reply) {
  INFO(reply.Describe());
  REQUIRE(reply.status == 200);
  return json::parse(reply.body);
}

TEST_CASE("every model route reaches the backend of the model it names",
          "[integration][front][routes]") {
  int pa = FreeLoopbackPort(), pb = FreeLoopbackPort();
  std::string yaml = "models:\n" + FakeModelYaml("rt-a", pa, "", "    useModelName: served-a\n") +
                     FakeModelYaml("rt-b", pb) +
                     "groups:\n  pair: {swap: false, exclusive: true, members: [rt-a, rt-b]}\n";
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  SECTION("POST routes with a JSON body: its model") {
    for (const char* path : {"/v1/chat/completions/input_tokens", "/v1/responses/input_tokens",
                             "/v1/chat/completions/control", "/v1/images/generations",
                             "/sdapi/v1/txt2img", "/sdapi/v1/img2img", "/v1/audio/voices"}) {
      INFO(path);
      for (const char* model : {"rt-a", "rt-b"}) {
        json echo = Echo(HttpPost(url, path, json{{"model", model}, {"prompt", "x"}}.dump()));
        CHECK(echo["path"] == path);
        CHECK(echo["model"] == model);
      }
    }
    // llama-swap's versionless routes lose their "/v", /audioapi its prefix.
    REQUIRE(HttpPost(url, "/v/chat/completions", ChatBody("rt-b", false)).status == 200);
    json last = Echo(HttpGet(url, "/upstream/rt-b/last-request"));
    CHECK(last["path"] == "/chat/completions");
    json task = Echo(HttpPost(url, "/audioapi/v1/tasks/run", R"({"model":"rt-a"})"));
    CHECK(task["path"] == "/v1/tasks/run");
    CHECK(task["model"] == "rt-a");

    HttpReply unknown = HttpPost(url, "/sdapi/v1/txt2img", R"({"model":"rt-none"})");
    CHECK(unknown.status == 404);
    CHECK(ErrorMessage(unknown.body).find("rt-none") != std::string::npos);
  }

  SECTION("GET routes: ?model=") {
    json props = Echo(HttpGet(url, "/props?model=rt-b"));
    CHECK(props["model_alias"] == "rt-b");
    CHECK(Echo(HttpGet(url, "/props?model=rt-a"))["model_alias"] == "rt-a");
    json voices = Echo(HttpGet(url, "/v1/audio/voices?model=rt-b"));
    CHECK(voices["path"] == "/v1/audio/voices");
    CHECK(voices["model"] == "rt-b");
    json loras = Echo(HttpGet(url, "/sdapi/v1/loras?model=rt-a"));
    CHECK(loras["path"] == "/sdapi/v1/loras");
    CHECK(loras["model"] == "rt-a");
    // useModelName: the backend reads its own name in ?model=.
    json last = Echo(HttpGet(url, "/upstream/rt-a/last-request"));
    CHECK(last["path"] == "/sdapi/v1/loras");
    CHECK(last["query"] == "model=served-a");

    HttpReply none = HttpGet(url, "/props");
    CHECK(none.status == 400);
    CHECK(ErrorMessage(none.body).find("no model") != std::string::npos);
    HttpReply unknown = HttpGet(url, "/v1/audio/voices?model=rt-none");
    CHECK(unknown.status == 404);
    CHECK(ErrorMessage(unknown.body).find("rt-none") != std::string::npos);
  }

  SECTION("a body that is not JSON: its form field, else ?model=") {
    const std::string multipart =
        "--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nrt-b\r\n"
        "--XyZ\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n"
        "Content-Type: image/png\r\n\r\n\x89PNG-bytes\r\n--XyZ--\r\n";
    for (const char* path : {"/v1/images/edits", "/sdapi/v1/img2img"}) {
      INFO(path);
      json edit = Echo(HttpPost(url, path, multipart, "multipart/form-data; boundary=XyZ"));
      CHECK(edit["path"] == path);
      CHECK(edit["model"] == "rt-b");
    }
    json form = Echo(HttpPost(url, "/v1/images/generations", "prompt=a+cat&model=rt-b",
                              "application/x-www-form-urlencoded"));
    CHECK(form["model"] == "rt-b");
    json raw = Echo(HttpPost(url, "/sdapi/v1/img2img?model=rt-a", "\x89PNG-bytes", "image/png"));
    CHECK(raw["path"] == "/sdapi/v1/img2img");
    CHECK(raw["model"] == "rt-a");

    HttpReply none = HttpPost(url, "/sdapi/v1/img2img", "\x89PNG-bytes", "image/png");
    CHECK(none.status == 400);
  }
}

}  // namespace
}  // namespace swapd::testing
