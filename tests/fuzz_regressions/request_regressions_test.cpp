// Requests that broke ParseJsonRequest / ApplyFilters (frontdoor/model_id.h, frontdoor/filters.h).
#include <catch2/catch.hpp>
#include <string>

#include "frontdoor/filters.h"
#include "frontdoor/model_id.h"

namespace swapd {
namespace {

// `depth` nested arrays as the value of "x".
std::string NestedBody(size_t depth) {
  return R"({"model":"m","x":)" + std::string(depth, '[') + std::string(depth, ']') + "}";
}

TEST_CASE("a number too large for a double is a 400, not an exception (fuzz_model_id)",
          "[unit][fuzz]") {
  // nlohmann::json throws out_of_range here, not parse_error: it escaped ParseJsonRequest.
  auto r = ParseJsonRequest(R"({"model":"m","a":1e400})", std::nullopt);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kInvalidArgument);
  CHECK_THAT(r.status().message(), Catch::Contains("number overflow"));
}

TEST_CASE("deeply nested JSON is refused before filters serialize it (stack overflow)",
          "[unit][fuzz]") {
  // Dumping or copying a document recurses once per level: a megabyte of `[` in a request
  // to a model with filters overflowed the server thread's stack and killed swapd.
  auto deep = ParseJsonRequest(NestedBody(1000000), std::nullopt);
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.status().code() == ErrorCode::kInvalidArgument);
  CHECK_THAT(deep.status().message(), Catch::Contains("deeper than 512"));
  CHECK_FALSE(ParseJsonRequest(NestedBody(kMaxJsonDepth), std::nullopt).ok());  // + the object

  auto ok = ParseJsonRequest(NestedBody(kMaxJsonDepth - 1), std::nullopt);
  REQUIRE(ok.ok());
  ModelConfig model;
  model.use_model_name = "real";
  nlohmann::json document = ParseJsonDocument(NestedBody(kMaxJsonDepth - 1));
  auto filtered = ApplyFilters(model, model.id, document);
  REQUIRE(filtered);
  CHECK(filtered->size() == NestedBody(kMaxJsonDepth - 1).size() + 3);  // "m" became "real"
}

TEST_CASE("brackets inside JSON strings do not count as nesting", "[unit][fuzz]") {
  std::string brackets(5000, '[');
  const std::string body = R"({"model":"m","p":")" + brackets + R"(\"{{{{"})";
  REQUIRE(ParseJsonRequest(body, std::nullopt).ok());
  CHECK(ParseJsonDocument(body)["p"] == brackets + "\"{{{{");
}

}  // namespace
}  // namespace swapd
