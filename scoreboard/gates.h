// Quality gates for `swapd bench`: a prompt sent at temperature 0 and a check of the answer. The
// built-in gates ask for small JSON documents; a gate file adds the user's own, each checked
// against a JSON schema (the subset documented in json_schema.h) or a regular expression. Pure
// functions of their input (LoadGateFile reads its file); thread safe. Gate files are YAML, read
// by gate_file.cpp, the one file of scoreboard/ that includes yaml-cpp (scoreboard/ depends on
// base/ only, so it does not use config/'s YAML document).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace swapd {

struct Gate {
  enum class Check {
    kJson,        // the answer is one valid JSON value with balanced brackets
    kJsonSchema,  // ... and it matches `schema`
    kRegex,       // the answer matches `regex` (ECMAScript, searched anywhere in GateAnswerText)
  };
  std::string name;
  std::string prompt;  // sent as the one user message
  Check check = Check::kJson;
  nlohmann::json schema;  // kJsonSchema
  std::string regex;      // kRegex
  int max_tokens = 256;
  std::string source;  // "built-in" or "FILE:LINE" where it was defined
};

struct GateVerdict {
  bool passed = false;
  std::string reason;  // why it failed, one line; empty when passed
};

// The built-in gates: a few short prompts whose answers must be JSON (an object with given keys,
// an array, nested brackets).
std::vector<Gate> BuiltInGates();

// A gate file: YAML, a list (or a map `gates:` holding a list) of
// {name, prompt, schema | regex, max_tokens}. A gate without schema and regex is a JSON gate.
// Errors name FILE:LINE:COL, every problem found.
Result<std::vector<Gate>> LoadGateFile(const std::string& path);
// The same from text; `name` stands for the file in messages. Used by tests.
Result<std::vector<Gate>> ParseGates(std::string_view text, const std::string& name);

// The answer as a gate sees it: a leading <think>...</think> block and one surrounding Markdown
// code fence (```json ... ```) removed, whitespace trimmed.
std::string GateAnswerText(std::string_view answer);

// Checks `answer` (the model's whole reply) against `gate`. Byte offsets in the reason count in
// GateAnswerText(answer).
GateVerdict CheckGate(const Gate& gate, std::string_view answer);

}  // namespace swapd
