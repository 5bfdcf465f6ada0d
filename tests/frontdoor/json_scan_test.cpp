// Unit tests of ScanJson: it must accept exactly what nlohmann::json::parse accepts and report
// the values, keys and depths a parsed document would hold.
#include "frontdoor/json_scan.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace swapd {
namespace {

// Writes the events down as text: "V0o" (object at depth 0), "K1:model", "V1s:\"m\"", "E0".
class Recorder : public JsonHandler {
 public:
  std::vector<std::string> events;
  void Value(size_t depth, JsonKind kind, std::string_view token) override {
    static const char* kKinds = "lbnsoa";
    events.push_back("V" + std::to_string(depth) + kKinds[static_cast<int>(kind)] +
                     (token.empty() ? "" : ":" + std::string(token)));
  }
  void Key(size_t depth, std::string_view key) override {
    events.push_back("K" + std::to_string(depth) + ":" + std::string(key));
  }
  void End(size_t depth) override { events.push_back("E" + std::to_string(depth)); }
};

bool NlohmannAccepts(const std::string& text) {
  return !nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false).is_discarded();
}

TEST_CASE("ScanJson accepts exactly what nlohmann parses", "[unit][front]") {
  const std::vector<std::string> texts = {
      // well formed
      "{}",
      "[]",
      " {\"a\" : [1, -2, 3.5e-3, true, false, null, \"x\"] } ",
      "0",
      "-0",
      "\"\"",
      "1E+2",
      "1e-2",
      "-0.0",
      "18446744073709551615",
      "18446744073709551616",
      "-9223372036854775809",
      "1e308",
      "[[[[]]]]",
      "{\"a\":{\"b\":{}}}",
      "\"\\u00e9\\ud83d\\ude00\"",
      "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
      "\xEF\xBB\xBF{}",
      "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"",
      "\t\r\n[1]\n",
      "1e-400",
      // malformed
      "",
      " ",
      "{",
      "}",
      "[1,]",
      "{\"a\":1,}",
      "{,}",
      "[,1]",
      "{\"a\" 1}",
      "{a:1}",
      "{'a':1}",
      "01",
      "-",
      "1.",
      ".5",
      "1e",
      "1e+",
      "+1",
      "--1",
      "0x10",
      "tru",
      "nul",
      "True",
      "NaN",
      "Infinity",
      "[1 2]",
      "{} {}",
      "{}x",
      "\"abc",
      "\"a\nb\"",
      "\"\\x\"",
      "\"\\u12\"",
      "\"\\ud83d\"",
      "\"\\ud83dx\"",
      "\"\\ude00\"",
      "\"\\ud83d\\u0041\"",
      "\"\xC3\"",
      "\"\xC0\xAF\"",
      "\"\xE0\x80\xAF\"",
      "\"\xED\xA0\x80\"",
      "\"\xF4\x90\x80\x80\"",
      "\"\xFF\"",
      "\"\x80\"",
      "\xEF\xBB{}",
      "\xEF{}",
      " \xEF\xBB\xBF{}",
      std::string("[1,\0]", 5),
      std::string("\"a\0\"", 4),
      "1e400",
      "-1e400",
      "[1e999]",
      "{\"a\":1}}",
      "[1]]",
      std::string("{}\0x", 4),
      std::string("1\0", 2),
      std::string("[\0]", 3),
  };
  for (const std::string& text : texts) {
    INFO(text);
    Recorder recorder;
    auto error = ScanJson(text, recorder);
    CHECK(!error.has_value() == NlohmannAccepts(text));
    if (error) CHECK_THAT(error->message, Catch::StartsWith("at line "));
  }
}

TEST_CASE("ScanJson reports values, keys and depths in order", "[unit][front]") {
  Recorder r;
  REQUIRE_FALSE(ScanJson(R"({"model":"m","x":{"model":[1,{}]},"s":true})", r));
  const std::vector<std::string> expected = {"V0o",      "K1:model", "V1s:\"m\"", "K1:x",     "V1o",
                                             "K2:model", "V2a",      "V3n:1",     "V3o",      "E3",
                                             "E2",       "E1",       "K1:s",      "V1b:true", "E0"};
  CHECK(r.events == expected);

  Recorder escaped;
  REQUIRE_FALSE(ScanJson(R"({"mo\u0064el":null})", escaped));
  CHECK(escaped.events[1] == "K1:model");
}

TEST_CASE("ScanJson passes over what the handler skips, minding strings and nesting",
          "[unit][front]") {
  // Skips every container below the top level.
  class Skipper : public Recorder {
   public:
    bool Skip(size_t depth) override { return depth >= 1; }
  };
  Skipper skipper;
  const std::string text =
      R"({"a": [1, {"b": "]}\"[{"}, [[]]], "c": {"d": "x\\"}, "e": 2, "f": [}})";
  // "f"'s value is not JSON, but it is passed over as a bracketed whole.
  CHECK_FALSE(ScanJson(text, skipper).has_value());
  CHECK(skipper.events == std::vector<std::string>{"V0o", "K1:a", "V1a", "E1", "K1:c", "V1o", "E1",
                                                   "K1:e", "V1n:2", "K1:f", "V1a", "E1", "E0"});
  // Still an error: an unclosed container, an unclosed string inside one, text after the value.
  for (const std::string bad : {R"({"a": [1, 2)", R"({"a": ["]})", R"({"a": ["x"]]})"}) {
    INFO(bad);
    Skipper again;
    CHECK(ScanJson(bad, again).has_value());
  }
}

TEST_CASE("ScanJson: depth limit, overflow and where an error is", "[unit][front]") {
  Recorder r;
  CHECK_FALSE(ScanJson("[[[]]]", r, 3));
  auto deep = ScanJson("[[[[]]]]", r, 3);
  REQUIRE(deep);
  CHECK(deep->kind == JsonScanError::Kind::kTooDeep);
  auto big = ScanJson("{\"n\": 1e400}", r);
  REQUIRE(big);
  CHECK(big->kind == JsonScanError::Kind::kNumberOverflow);
  auto bad = ScanJson("{\n  \"a\": 1,\n  \"b\" 2}", r);
  REQUIRE(bad);
  CHECK(bad->kind == JsonScanError::Kind::kMalformed);
  CHECK(bad->message == "at line 3, column 7: expected ':' after an object key");
}

TEST_CASE("string and number tokens read as a parsed document holds them", "[unit][front]") {
  for (const char* token : {R"("plain")", R"("a\"b\\c\/d\n\t")", R"("\u00e9\ud83d\ude00x")",
                            R"("\u0000")", "\"caf\xC3\xA9\""}) {
    INFO(token);
    CHECK(DecodeJsonString(token) == nlohmann::json::parse(token).get<std::string>());
  }
  for (const char* token : {"0", "-0", "42", "-42", "9223372036854775807", "-9223372036854775808",
                            "18446744073709551615", "18446744073709551616", "-9223372036854775809",
                            "3.25", "1e3", "-2.5E-3", "1e-400"}) {
    INFO(token);
    const nlohmann::json doc = nlohmann::json::parse(token);
    const JsonNumber n = ReadJsonNumber(token);
    if (doc.is_number_unsigned()) {
      REQUIRE(n.kind == JsonNumber::Kind::kUnsigned);
      CHECK(n.u == doc.get<uint64_t>());
    } else if (doc.is_number_integer()) {
      REQUIRE(n.kind == JsonNumber::Kind::kSigned);
      CHECK(n.i == doc.get<int64_t>());
    } else {
      REQUIRE(n.kind == JsonNumber::Kind::kFloat);
      CHECK(n.f == doc.get<double>());
    }
  }
}

}  // namespace
}  // namespace swapd
