// Quality gates (scoreboard/gates.h): the built-in set, the answer text a gate sees, the JSON
// and bracket checks, the JSON-schema subset and regex gates, and gate files with their errors.
#include "scoreboard/gates.h"

#include <catch2/catch.hpp>

#include "tests/support/temp_dir.h"

namespace swapd::testing {
namespace {

Gate JsonGate() { return BuiltInGates().front(); }

Gate SchemaGate(const std::string& schema) {
  Gate gate;
  gate.name = "g";
  gate.check = Gate::Check::kJsonSchema;
  gate.schema = nlohmann::json::parse(schema);
  return gate;
}

std::string Why(const Gate& gate, std::string_view answer) {
  const GateVerdict verdict = CheckGate(gate, answer);
  CHECK(verdict.passed == verdict.reason.empty());
  return verdict.reason;
}

TEST_CASE("the built-in gates ask for JSON and check only JSON", "[unit][scoreboard]") {
  const std::vector<Gate> gates = BuiltInGates();
  REQUIRE(gates.size() >= 3);
  REQUIRE(gates.size() <= 4);
  for (const Gate& gate : gates) {
    INFO(gate.name);
    // The fake backend answers a prompt that says "JSON" with a JSON document.
    CHECK(gate.prompt.find("JSON") != std::string::npos);
    CHECK(gate.check == Gate::Check::kJson);
    CHECK(gate.source == "built-in");
    CHECK(gate.max_tokens > 0);
    CHECK(CheckGate(gate, R"({"ok": true, "items": [1, 2, {"a": "b"}]})").passed);
  }
}

TEST_CASE("a gate sees the answer without a think block and a code fence", "[unit][scoreboard]") {
  CHECK(GateAnswerText("  {\"a\": 1}\n") == "{\"a\": 1}");
  CHECK(GateAnswerText("<think>\nhmm {\n</think>\n\n[1, 2]") == "[1, 2]");
  CHECK(GateAnswerText("```json\n{\"a\": [1]}\n```") == "{\"a\": [1]}");
  CHECK(GateAnswerText("<think>x</think>```\n[]\n```\n") == "[]");
  // Cut short at max_tokens: the opening fence still goes.
  CHECK(GateAnswerText("```json\n{\"a\": [1") == "{\"a\": [1");
  // A think block that never ends stays: the answer is not JSON.
  CHECK(GateAnswerText("<think>still thinking") == "<think>still thinking");
}

TEST_CASE("a JSON gate wants one valid JSON value with balanced brackets", "[unit][scoreboard]") {
  const Gate gate = JsonGate();
  CHECK(Why(gate, "```json\n{\"quote\": \"She said \\\"hi\\\" and left {early} [again]\"}\n```")
            .empty());
  CHECK(Why(gate, "<think>{[</think>[1, 2, 3]").empty());
  CHECK(Why(gate, "") == "empty answer, expected JSON");
  CHECK(Why(gate, "Sure! {\"a\": 1}").starts_with("not valid JSON at byte 0: "));
  const std::string truncated = Why(gate, R"({"items": [1, 2)");
  CHECK(truncated.starts_with("not valid JSON at byte "));
  CHECK(truncated.find("unbalanced brackets: '[' at byte 10 is never closed") != std::string::npos);
  CHECK(Why(gate, R"({"a": [1, 2}])").find("'}' at byte 11 closes '[' at byte 6") !=
        std::string::npos);
  CHECK(Why(gate, R"([1] ])").find("']' at byte 4 closes nothing") != std::string::npos);
  CHECK(Why(gate, R"({"a": "b)").find("the string at byte 6 never ends") != std::string::npos);
  // Brackets inside strings do not count.
  CHECK(Why(gate, R"({"a": "}}]]", "b": "\"{"})").empty());
  CHECK(Why(gate, "{\"a\": 1} {\"b\": 2}").starts_with("not valid JSON at byte "));
  // One line, even when the answer has many.
  CHECK(Why(gate, "{\n\"a\":\n").find('\n') == std::string::npos);
  // Valid UTF-8, even when the parser stopped inside a character (a random model's answer, seen
  // with a real llama-server): its reason goes into JSON and the store.
  const std::string cut = Why(gate, "\xe3\x83\xaf\xe3\x83\xaf quant");
  CHECK(cut.starts_with("not valid JSON at byte 0: "));
  CHECK(cut.find("\xef\xbf\xbd") != std::string::npos);  // U+FFFD for the lone first byte
  CHECK_NOTHROW(nlohmann::json(cut).dump());
}

TEST_CASE("a schema gate checks types, properties and bounds", "[unit][scoreboard]") {
  const Gate gate = SchemaGate(R"({
    "type": "object",
    "required": ["name", "items"],
    "additionalProperties": false,
    "properties": {
      "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
      "items": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "integer"}},
      "color": {"enum": ["red", "green"]},
      "version": {"const": 2},
      "score": {"type": ["number", "null"], "minimum": 0, "maximum": 10}
    }
  })");
  CHECK(Why(gate, R"({"name": "abc", "items": [1, 2.0, 3], "color": "red", "version": 2,
                      "score": null})")
            .empty());
  CHECK(Why(gate, R"({"name": "abc", "items": [1, 2, "3"]})") ==
        "$.items[2]: expected integer, got string");
  CHECK(Why(gate, R"({"name": "abc", "items": [1.5]})") ==
        "$.items[0]: expected integer, got number");
  CHECK(Why(gate, R"({"name": "abc"})") == "$: missing required property \"items\"");
  CHECK(Why(gate, R"({"name": "abc", "items": [1], "extra": 1})") ==
        "$: unexpected property \"extra\"");
  CHECK(Why(gate, R"({"name": "a", "items": [1]})") == "$.name: length 1, expected at least 2");
  CHECK(Why(gate, R"({"name": "abcdef", "items": [1]})") == "$.name: length 6, expected at most 5");
  CHECK(Why(gate, R"({"name": "ab1", "items": [1]})") ==
        "$.name: \"ab1\" does not match pattern ^[a-z]+$");
  CHECK(Why(gate, R"({"name": "abc", "items": []})") == "$.items: 0 items, expected at least 1");
  CHECK(Why(gate, R"({"name": "abc", "items": [1, 2, 3, 4]})") ==
        "$.items: 4 items, expected at most 3");
  CHECK(Why(gate, R"({"name": "abc", "items": [1], "color": "blue"})") ==
        "$.color: \"blue\" is not one of [\"red\",\"green\"]");
  CHECK(Why(gate, R"({"name": "abc", "items": [1], "version": 3})") ==
        "$.version: expected 2, got 3");
  CHECK(Why(gate, R"({"name": "abc", "items": [1], "score": 11})") ==
        "$.score: 11 is above the maximum 10");
  CHECK(Why(gate, R"({"name": "abc", "items": [1], "score": -1})") ==
        "$.score: -1 is below the minimum 0");
  CHECK(Why(gate, R"({"name": "abc", "items": [1], "score": "x"})") ==
        "$.score: expected number or null, got string");
  CHECK(Why(gate, "[1]") == "$: expected object, got array");
  // Not JSON at all: the JSON check speaks first.
  CHECK(Why(gate, "{").starts_with("not valid JSON"));
  // Lengths count code points, not bytes.
  CHECK(Why(SchemaGate(R"({"maxLength": 2})"), "\"\xC3\xA9\xC3\xA9\"").empty());
  CHECK(Why(SchemaGate(R"({"properties": {"a b": {"type": "null"}}})"), R"({"a b": 1})") ==
        "$[\"a b\"]: expected null, got integer");
}

TEST_CASE("a regex gate searches the answer", "[unit][scoreboard]") {
  Gate gate;
  gate.name = "r";
  gate.check = Gate::Check::kRegex;
  gate.regex = "\\b42\\b";
  CHECK(CheckGate(gate, "The answer is 42.").passed);
  CHECK(Why(gate, "<think>42</think>The answer is 41.") == "the answer does not match /\\b42\\b/");
}

TEST_CASE("a gate file holds JSON, schema and regex gates", "[unit][scoreboard]") {
  auto gates = ParseGates(R"(
gates:
  - name: plain
    prompt: Give me JSON.
  - name: typed
    prompt: A JSON object with an integer n.
    max_tokens: 64
    schema:
      type: object
      required: [n]
      properties:
        n: {type: integer, minimum: 1}
        label: {const: "7"}
  - name: as-text
    prompt: JSON please
    schema: '{"type": "array", "items": {"type": "boolean"}}'
  - name: answer
    prompt: What is six times seven?
    regex: '\b42\b'
)",
                          "mine.yaml");
  INFO(gates.status().message());
  REQUIRE(gates.ok());
  const auto& g = gates.value();
  REQUIRE(g.size() == 4);
  CHECK(g[0].check == Gate::Check::kJson);
  CHECK(g[0].source == "mine.yaml:3");
  CHECK(g[0].max_tokens == 256);
  CHECK(g[1].check == Gate::Check::kJsonSchema);
  CHECK(g[1].max_tokens == 64);
  CHECK(g[1].schema["properties"]["n"]["minimum"] == 1);
  CHECK(g[1].schema["properties"]["label"]["const"] == "7");  // quoted: text
  CHECK(CheckGate(g[1], R"({"n": 3})").passed);
  CHECK(Why(g[1], R"({"n": 0})") == "$.n: 0 is below the minimum 1");
  CHECK(g[2].schema["items"]["type"] == "boolean");
  CHECK(g[3].check == Gate::Check::kRegex);
  CHECK(CheckGate(g[3], "42").passed);

  // A bare list works as well.
  auto bare = ParseGates("- name: a\n  prompt: p\n", "bare.yaml");
  REQUIRE(bare.ok());
  CHECK(bare.value().size() == 1);
}

TEST_CASE("a gate file's errors name file, line and column, every one", "[unit][scoreboard]") {
  auto gates = ParseGates(R"(gates:
  - name: one
    promt: typo
  - name: two
    prompt: p
    schema:
      type: strin
      properties:
        a: {minimun: 1}
  - name: three
    prompt: p
    regex: '(unclosed'
  - name: four
    prompt: p
    regex: x
    schema: {type: object}
  - name: one
    prompt: p
    max_tokens: lots
  - prompt: nameless
  - name: six
    prompt: p
    schema: '{"type": '
)",
                          "bad.yaml");
  REQUIRE_FALSE(gates.ok());
  const std::string m = gates.status().message();
  INFO(m);
  CHECK(m.find("bad.yaml:3:5: gate \"one\": unknown key \"promt\"") != std::string::npos);
  CHECK(m.find("bad.yaml:2:5: gate \"one\": no prompt") != std::string::npos);
  CHECK(m.find("bad.yaml:7:7: gate \"two\": schema at /type: unknown type \"strin\"") !=
        std::string::npos);
  CHECK(m.find("bad.yaml:9:13: gate \"two\": schema at /properties/a/minimun: unknown keyword "
               "\"minimun\"") != std::string::npos);
  CHECK(m.find("bad.yaml:12:12: gate \"three\": bad regex /(unclosed/") != std::string::npos);
  CHECK(m.find("gate \"four\": has both schema and regex") != std::string::npos);
  CHECK(m.find("bad.yaml:17: gate \"one\" is defined twice") != std::string::npos);
  CHECK(m.find("bad.yaml:19:17: gate \"one\": max_tokens must be a whole number > 0") !=
        std::string::npos);
  CHECK(m.find("bad.yaml:20:5: gate without a name") != std::string::npos);
  CHECK(m.find("gate \"six\": schema is not valid JSON") != std::string::npos);

  CHECK_FALSE(ParseGates("", "empty.yaml").ok());
  CHECK_FALSE(ParseGates("gates: []", "empty.yaml").ok());
  auto syntax = ParseGates("gates:\n  - name: [unclosed\n", "syntax.yaml");
  REQUIRE_FALSE(syntax.ok());
  CHECK(syntax.status().message().starts_with("syntax.yaml:"));
  auto other = ParseGates("gate:\n  - name: a\n    prompt: p\n", "other.yaml");
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().message().find("other.yaml:1:1: unknown key \"gate\"") != std::string::npos);
}

TEST_CASE("a gate file is read from disk", "[unit][scoreboard]") {
  TempDir tmp("swapd-gates");
  const std::string path = tmp.Write("gates.yaml", "- name: a\n  prompt: JSON\n");
  auto gates = LoadGateFile(path);
  REQUIRE(gates.ok());
  CHECK(gates.value().at(0).source == path + ":1");
  auto missing = LoadGateFile(tmp.Path("none.yaml"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().starts_with(tmp.Path("none.yaml") + ": cannot read"));
}

}  // namespace
}  // namespace swapd::testing
