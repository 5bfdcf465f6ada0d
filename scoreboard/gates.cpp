#include "scoreboard/gates.h"

#include <algorithm>
#include <regex>

#include "base/json_text.h"
#include "base/text.h"
#include "scoreboard/json_schema.h"

namespace swapd {
namespace {

Gate BuiltIn(std::string name, std::string prompt) {
  Gate gate;
  gate.name = std::move(name);
  gate.prompt = std::move(prompt);
  gate.check = Gate::Check::kJson;
  gate.source = "built-in";
  return gate;
}

// Whether the brackets of `text` pair up, ignoring those inside JSON strings; why not when they
// do not ("'}' at byte 17 closes '[' at byte 3"). Empty when balanced.
std::string BracketProblem(std::string_view text) {
  struct Open {
    char c;
    size_t at;
  };
  std::vector<Open> open;
  bool in_string = false;
  size_t string_at = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      string_at = i;
    } else if (c == '{' || c == '[') {
      open.push_back({c, i});
    } else if (c == '}' || c == ']') {
      const std::string closing = std::string("'") + c + "' at byte " + std::to_string(i);
      if (open.empty()) return "unbalanced brackets: " + closing + " closes nothing";
      const char expected = open.back().c == '{' ? '}' : ']';
      if (c != expected) {
        return "unbalanced brackets: " + closing + " closes '" + open.back().c + "' at byte " +
               std::to_string(open.back().at);
      }
      open.pop_back();
    }
  }
  if (in_string) {
    return "unbalanced brackets: the string at byte " + std::to_string(string_at) + " never ends";
  }
  if (!open.empty()) {
    return std::string("unbalanced brackets: '") + open.back().c + "' at byte " +
           std::to_string(open.back().at) + " is never closed";
  }
  return "";
}

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
// column 5: " prefix; the byte offset is reported on its own.
std::string ParseErrorDetail(const nlohmann::json::parse_error& e) {
  const std::string what = e.what();
  const size_t error = what.find("parse error");
  const size_t colon = error == std::string::npos ? error : what.find(": ", error);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

GateVerdict Fail(std::string reason) { return GateVerdict{false, std::move(reason)}; }

}  // namespace

std::vector<Gate> BuiltInGates() {
  // Every prompt says "JSON": the fake backend of the integration tests answers such prompts with
  // a JSON document.
  return {
      BuiltIn("json-object",
              "Reply with only a JSON object and no other text: {\"name\": the name of a fruit, "
              "\"color\": its color, \"count\": a whole number from 1 to 9}."),
      BuiltIn("json-array",
              "Reply with only a JSON array and no other text: the first five prime numbers."),
      BuiltIn("json-nested",
              "Reply with only a JSON object and no other text, describing a small library: key "
              "\"books\" holds an array of two objects, each with a \"title\" string and an "
              "\"authors\" array of strings; key \"open\" is true."),
      BuiltIn("json-escapes",
              "Reply with only a JSON object and no other text, with one key \"quote\" whose "
              "value is this exact text: She said \"hi\" and left {early} [again]."),
  };
}

std::string GateAnswerText(std::string_view answer) {
  std::string_view s = TrimSpace(answer);
  if (s.starts_with("<think>")) {
    const size_t end = s.find("</think>");
    if (end != std::string_view::npos)
      s = TrimSpace(s.substr(end + std::string_view("</think>").size()));
  }
  if (s.starts_with("```")) {
    // The opening fence and its language tag go even when the closing one is missing (an answer
    // cut short at max_tokens), so that the check reports the JSON's problem, not the fence.
    const size_t newline = s.find('\n');
    s = newline == std::string_view::npos ? std::string_view() : s.substr(newline + 1);
    s = TrimSpace(s);
    if (s.ends_with("```")) s = TrimSpace(s.substr(0, s.size() - 3));
  }
  return std::string(s);
}

GateVerdict CheckGate(const Gate& gate, std::string_view answer) {
  const std::string text = GateAnswerText(answer);
  if (gate.check == Gate::Check::kRegex) {
    try {
      if (std::regex_search(text, std::regex(gate.regex, std::regex::ECMAScript)))
        return {true, ""};
      return Fail("the answer does not match /" + gate.regex + "/");
    } catch (const std::regex_error& e) {
      return Fail("regex /" + gate.regex + "/ failed: " + e.what());
    }
  }
  if (text.empty()) return Fail("empty answer, expected JSON");
  const std::string brackets = BracketProblem(text);
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const size_t at = std::min(e.byte == 0 ? 0 : e.byte - 1, text.size());
    // (nlohmann's "last read" may be the first byte of a multi-byte character alone.)
    return Fail("not valid JSON at byte " + std::to_string(at) + ": " +
                ValidUtf8(ParseErrorDetail(e)) + (brackets.empty() ? "" : "; " + brackets));
  }
  if (!brackets.empty()) return Fail(brackets);
  if (gate.check == Gate::Check::kJsonSchema) {
    std::string mismatch = SchemaMismatch(gate.schema, value);
    if (!mismatch.empty()) return Fail(std::move(mismatch));
  }
  return {true, ""};
}

}  // namespace swapd
