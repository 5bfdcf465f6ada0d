// Deterministic "inference" for fake-llama-server: the words a prompt generates, the prompt's token
// count, llama.cpp-style timings and embedding vectors. Pure functions of their arguments, so a
// streamed and a non-streamed request with the same prompt produce the same text. Thread safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace fake_backend {

// Tokens "count" as whitespace-separated words.
int CountWords(std::string_view text);

// n tokens derived from the prompt: the first is a bare word, the others start with a space, so
// concatenating them gives readable text.
std::vector<std::string> GenerateTokens(std::string_view prompt, int n);

// The reply to a prompt containing the word "JSON": a deterministic JSON document (an object
// whose keys are the words the prompt puts in double quotes, else words of the vocabulary, with a
// string, an array and a nested object among the values), split into pieces of a few characters
// like tokens. `bad`: the last closing bracket is left out, so the document is invalid.
bool AsksForJson(std::string_view prompt);
std::vector<std::string> JsonReplyTokens(std::string_view prompt, bool bad);

// `text` as tokens: its words, each after the first with its leading space.
std::vector<std::string> ReplyTokens(std::string_view text);

// llama.cpp's `timings` object. Durations are nominal (derived from --tokens-per-second, or 1000
// tokens/s when unpaced) so that every number is finite and deterministic.
struct Timings {
  int cache_n = 0;   // prompt tokens reused from the slot's cache
  int prompt_n = 0;  // prompt tokens processed
  double prompt_ms = 0;
  int predicted_n = 0;
  double predicted_ms = 0;
  double prompt_per_token_ms = 0;
  double predicted_per_token_ms = 0;

  nlohmann::json ToJson() const;
};
Timings MakeTimings(int prompt_n, int predicted_n, double tokens_per_second);

// A unit-length embedding of `dimensions` floats derived from the text.
std::vector<float> EmbeddingFor(std::string_view text, int dimensions);

// Standard base64 (with padding) of the raw little-endian float32 bytes, as OpenAI's
// encoding_format "base64" sends them.
std::string Base64OfFloats(const std::vector<float>& values);

// A response id such as "chatcmpl-<32 letters>", unique within the process.
std::string NextId(std::string_view prefix);

}  // namespace fake_backend
