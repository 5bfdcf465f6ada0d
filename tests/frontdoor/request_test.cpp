// Unit tests of the request-side pieces of the front door: model-id extraction, filters, auth,
// the error mapper, and the usage scanner.
#include <catch2/catch.hpp>

#include "frontdoor/auth.h"
#include "frontdoor/error_response.h"
#include "frontdoor/filters.h"
#include "frontdoor/model_id.h"
#include "frontdoor/usage_scanner.h"
#include "tests/support/usage_reference.h"

namespace swapd {
namespace {

TEST_CASE("model id comes from the JSON body", "[unit][front]") {
  auto r = ParseJsonRequest(R"({"model":"qwen","messages":[]})", std::nullopt);
  REQUIRE(r.ok());
  CHECK(r.value().model == "qwen");
  CHECK(ParseJsonDocument(R"({"model":"qwen","messages":[]})")["messages"].is_array());
}

TEST_CASE("the body is scanned as a parsed document would read", "[unit][front]") {
  // The last of duplicate keys counts; a null model is no model; nested keys are not the model.
  CHECK(ParseJsonRequest(R"({"model":"a","model":"b"})", std::nullopt).value().model == "b");
  CHECK(ParseJsonRequest(R"({"model":7,"model":"b"})", std::nullopt).value().model == "b");
  CHECK_FALSE(ParseJsonRequest(R"({"model":"a","model":7})", std::nullopt).ok());
  CHECK(ParseJsonRequest(R"({"model":null})", std::string("q")).value().model == "q");
  CHECK(
      ParseJsonRequest(R"({"x":{"model":"inner"},"model":"outer"})", std::nullopt).value().model ==
      "outer");
  CHECK(ParseJsonRequest(R"({"x":{"model":"inner"}})", std::string("q")).value().model == "q");
  CHECK(ParseJsonRequest(R"({"model":"m","stream":"x","stream":false})", std::nullopt).ok());
  CHECK(ParseJsonRequest(R"({"model":"m","stream":null,"s":{"stream":1}})", std::nullopt).ok());
  auto big = ParseJsonRequest(R"({"model":"m","n":1e400})", std::nullopt);
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(big.status().message(), Catch::Contains("unreadable JSON"));
  auto trailing = ParseJsonRequest(R"({"model":"m"} x)", std::nullopt);
  REQUIRE_FALSE(trailing.ok());
  CHECK_THAT(trailing.status().message(), Catch::Contains("malformed JSON"));
}

TEST_CASE("model id falls back to ?model=", "[unit][front]") {
  auto r = ParseJsonRequest(R"({"input":"x"})", std::string("embed"));
  REQUIRE(r.ok());
  CHECK(r.value().model == "embed");
  auto empty_body = ParseJsonRequest("", std::string("embed"));
  REQUIRE(empty_body.ok());
  CHECK(empty_body.value().model == "embed");
}

TEST_CASE("bad bodies are 400 with a message that says why", "[unit][front]") {
  struct Case {
    const char* body;
    const char* message;
  } cases[] = {
      {R"({"model": )", "malformed JSON"},
      {R"([1,2])", "must be a JSON object"},
      {R"({"model": 7})", "\"model\" field must be a string"},
      {R"({"messages": []})", "no model in the request"},
      {R"({"model": ""})", "no model in the request"},
      {R"({"model": "m", "stream": "yes"})", "\"stream\" field must be true or false, got \"yes\""},
      {R"({"model": "m", "stream": 1})", "\"stream\" field must be true or false"},
      {"", "body is empty"},
  };
  for (const auto& c : cases) {
    INFO(c.body);
    auto r = ParseJsonRequest(c.body, std::nullopt);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == ErrorCode::kInvalidArgument);
    CHECK_THAT(r.status().message(), Catch::Contains(c.message));
  }
}

TEST_CASE("filters apply in order and leave the body alone when nothing changes", "[unit][front]") {
  ModelConfig model;
  nlohmann::json doc = nlohmann::json::parse(R"({"model":"a","temperature":0.7,"top_k":5})");
  CHECK_FALSE(HasFilters(model));
  CHECK_FALSE(ApplyFilters(model, model.id, doc).has_value());
  ModelConfig stripping;
  stripping.strip_params = {"x"};
  CHECK(HasFilters(stripping));

  model.use_model_name = "real-name";
  model.strip_params = {"temperature", "model", "absent"};
  model.set_params = {{"top_k", 40}, {"model", "ignored"}, {"min_p", 0.05}};
  CHECK(HasFilters(model));
  auto out = ApplyFilters(model, model.id, doc);
  REQUIRE(out.has_value());
  auto result = nlohmann::json::parse(*out);
  CHECK(result["model"] == "real-name");
  CHECK_FALSE(result.contains("temperature"));
  CHECK(result["top_k"] == 40);
  CHECK(result["min_p"] == 0.05);

  // Already in the wanted shape: untouched.
  nlohmann::json again = result;
  CHECK_FALSE(ApplyFilters(model, model.id, again).has_value());
}

TEST_CASE("api keys: bearer, x-api-key and basic password, nothing else", "[unit][front]") {
  std::vector<std::string> keys = {"sk-one", "sk-two"};
  CHECK(IsAuthorized({}, "", ""));
  CHECK(IsAuthorized(keys, "Bearer sk-two", ""));
  CHECK(IsAuthorized(keys, "bearer  sk-one ", ""));
  CHECK(IsAuthorized(keys, "", "sk-one"));
  CHECK(IsAuthorized(keys, "Basic dXNlcjpzay1vbmU=", ""));  // user:sk-one
  CHECK_FALSE(IsAuthorized(keys, "", ""));
  CHECK_FALSE(IsAuthorized(keys, "Bearer sk-on", ""));
  CHECK_FALSE(IsAuthorized(keys, "Bearer sk-one2", ""));
  CHECK_FALSE(IsAuthorized(keys, "Basic c2stb25l", ""));  // "sk-one" without a colon
  CHECK_FALSE(IsAuthorized(keys, "Bearer ", ""));
  CHECK(DecodeBase64("aGVsbG8=") == "hello");
  CHECK(DecodeBase64("a$b").empty());
}

TEST_CASE("errors map to status and OpenAI-shaped JSON", "[unit][front]") {
  struct Case {
    ErrorCode code;
    int status;
  } cases[] = {{ErrorCode::kInvalidArgument, 400}, {ErrorCode::kUnauthorized, 401},
               {ErrorCode::kNotFound, 404},        {ErrorCode::kPayloadTooLarge, 413},
               {ErrorCode::kTooManyRequests, 429}, {ErrorCode::kInternal, 500},
               {ErrorCode::kBackendFailed, 502},   {ErrorCode::kUnavailable, 503},
               {ErrorCode::kTimeout, 504}};
  for (const auto& c : cases) {
    HttpResponse res;
    SetErrorResponse(res, Status::Error(c.code, "went wrong \xff"));
    CHECK(res.status == c.status);
    auto body = nlohmann::json::parse(res.body);
    CHECK_THAT(body["error"]["message"].get<std::string>(), Catch::StartsWith("went wrong"));
    CHECK(body["error"]["type"].is_string());
    CHECK(body["error"]["code"].is_string());
    CHECK(res.headers.Get("Content-Type") == "application/json");
  }
  HttpResponse busy;
  SetErrorResponse(busy, Status::Error(ErrorCode::kTooManyRequests, "busy"));
  CHECK(busy.headers.Get("Retry-After") == "1");
  HttpResponse denied;
  SetErrorResponse(denied, Status::Error(ErrorCode::kUnauthorized, "no"));
  CHECK(denied.headers.Has("WWW-Authenticate"));
  CHECK_THAT(ErrorEvent(Status::Error(ErrorCode::kBackendFailed, "x")),
             Catch::StartsWith("data: {\"error\"") && Catch::EndsWith("\n\n"));
}

TEST_CASE("usage scanner reads the last usage and timings of an SSE stream", "[unit][front]") {
  UsageScanner scanner(true);
  std::string stream =
      "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n"
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3},"
      "\"timings\":{\"prompt_per_second\":100.5,\"predicted_per_second\":20.25,\"cache_n\":8}}\n\n"
      "data: [DONE]\n\n";
  // Fed in awkward pieces, as a network delivers it.
  for (size_t i = 0; i < stream.size(); i += 7) scanner.Feed(stream.substr(i, 7));
  Usage u = scanner.Finish();
  CHECK(u.prompt_tokens == 12);
  CHECK(u.completion_tokens == 3);
  CHECK(u.cached_tokens == 8);
  CHECK(u.prompt_per_second == Approx(100.5));
  CHECK(u.predicted_per_second == Approx(20.25));
}

TEST_CASE("usage scanner reads a JSON body and tolerates garbage", "[unit][front]") {
  UsageScanner json(false);
  json.Feed(R"({"usage":{"prompt_tokens":4,"completion_tokens":9},"timings":{"predicted_n":9}})");
  Usage u = json.Finish();
  CHECK(u.prompt_tokens == 4);
  CHECK(u.completion_tokens == 9);

  UsageScanner garbage(true);
  garbage.Feed("data: {\"usage\": nope}\n\nnot sse at all\n");
  CHECK(garbage.Finish().empty());
}

TEST_CASE("usage scanner reads what a parsed document holds, without parsing one",
          "[unit][front]") {
  const char* documents[] = {
      R"({"usage":{"prompt_tokens":4,"completion_tokens":9}})",
      (R"({"timings":{"prompt_n":7,"predicted_n":2,"cache_n":1,"prompt_per_second":3,)"
       R"("predicted_per_second":2.5}})"),
      R"({"usage":{"input_tokens":5,"output_tokens":6,"prompt_tokens":1}})",
      // The last of duplicate keys wins, also when it is not a number or not an object.
      R"({"usage":{"prompt_tokens":4,"prompt_tokens":"x","completion_tokens":1}})",
      R"({"usage":{"prompt_tokens":4},"usage":[1]})",
      R"({"usage":{"prompt_tokens":4},"usage":{"completion_tokens":2}})",
      R"({"timings":{"cache_n":3},"timings":null,"usage":{"prompt_tokens":1}})",
      // Nested objects and arrays inside usage are not usage.
      R"({"usage":{"details":{"prompt_tokens":9},"prompt_tokens":[1],"completion_tokens":{}}})",
      R"({"choices":[{"usage":{"prompt_tokens":9}}],"x":{"timings":{"cache_n":1}}})",
      // Numbers of every kind: negative, beyond int64, float, huge float.
      R"({"usage":{"prompt_tokens":-3,"completion_tokens":18446744073709551615}})",
      R"({"usage":{"prompt_tokens":2.9,"completion_tokens":1e300},"timings":{"cache_n":1e19}})",
      R"({"timings":{"prompt_per_second":-0.5,"predicted_per_second":12}})",
      // Not a whole JSON object: nothing.
      R"({"usage":{"prompt_tokens":4}} trailing)",
      R"({"usage":{"prompt_tokens":4},)",
      R"([{"usage":{"prompt_tokens":4}}])",
      R"({"usage":{"prompt_tokens":1e400}})",
      "",
      "null",
  };
  for (const char* document : documents) {
    INFO(document);
    UsageScanner scanner(false);
    scanner.Feed(document);
    Usage sax = scanner.Finish();
    CHECK(testing::SameUsage(sax, testing::ReferenceUsage(document)));
  }
  // Broken only where the scanner passes over (the choices): the counts are read all the same.
  UsageScanner lenient(false);
  lenient.Feed("{\"choices\":[{\"text\":\"\x01\"}],\"usage\":{\"prompt_tokens\":4}}");
  CHECK(lenient.Finish().prompt_tokens == 4);
  // Spot checks that the reference itself reads as intended.
  UsageScanner dup(false);
  dup.Feed(R"({"usage":{"prompt_tokens":4},"usage":{"completion_tokens":2}})");
  Usage u = dup.Finish();
  CHECK_FALSE(u.prompt_tokens);
  CHECK(u.completion_tokens == 2);
}

}  // namespace
}  // namespace swapd
