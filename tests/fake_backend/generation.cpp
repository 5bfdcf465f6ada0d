#include "tests/fake_backend/generation.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "base/stable_hash.h"

namespace fake_backend {
namespace {

constexpr std::array<std::string_view, 24> kVocabulary = {
    "the",    "quick", "model",  "swaps", "tokens", "stream", "fast",   "local",
    "llama",  "reply", "daemon", "hello", "world",  "again",  "ready",  "loaded",
    "answer", "small", "fake",   "text",  "words",  "flow",   "gently", "here"};

constexpr double kUnpacedTokenMs = 1.0;  // 1000 tokens/s when --tokens-per-second is 0
constexpr double kPromptTokenMs = 0.2;   // 5000 tokens/s prompt processing

}  // namespace

int CountWords(std::string_view text) {
  int count = 0;
  bool in_word = false;
  for (char c : text) {
    bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
    if (!space && !in_word) ++count;
    in_word = !space;
  }
  return count;
}

std::vector<std::string> GenerateTokens(std::string_view prompt, int n) {
  std::vector<std::string> tokens;
  tokens.reserve(n > 0 ? n : 0);
  const uint64_t seed = swapd::Fnv1a().Add(prompt).value();
  for (int i = 0; i < n; ++i) {
    std::string_view word = kVocabulary[(seed + static_cast<uint64_t>(i) * 7) % kVocabulary.size()];
    std::string token;
    token.reserve(word.size() + 1);
    if (i > 0) token += ' ';
    token += word;
    tokens.push_back(std::move(token));
  }
  return tokens;
}

bool AsksForJson(std::string_view prompt) { return prompt.find("JSON") != std::string_view::npos; }

std::vector<std::string> JsonReplyTokens(std::string_view prompt, bool bad) {
  std::vector<std::string> keys;
  for (size_t open = prompt.find('"'); open != std::string_view::npos && keys.size() < 6;) {
    const size_t close = prompt.find('"', open + 1);
    if (close == std::string_view::npos) break;
    std::string_view word = prompt.substr(open + 1, close - open - 1);
    if (!word.empty() && word.size() <= 32 && word.find_first_of(" \n") == std::string_view::npos) {
      keys.emplace_back(word);
    }
    open = prompt.find('"', close + 1);
  }
  const uint64_t seed = swapd::Fnv1a().Add(prompt).value();
  auto word = [seed](uint64_t i) {
    return std::string(kVocabulary[(seed + i * 5) % kVocabulary.size()]);
  };
  for (uint64_t i = 0; keys.size() < 3; ++i) keys.push_back(word(i + 11));
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  for (size_t i = 0; i < keys.size(); ++i) {
    switch (i % 3) {
      case 0:
        doc[keys[i]] = word(i);
        break;
      case 1:
        doc[keys[i]] = {word(i), word(i + 1), static_cast<int>(seed % 100)};
        break;
      default:
        doc[keys[i]] = {{word(i + 2), {true, nullptr}}, {"count", static_cast<int>(i)}};
        break;
    }
  }
  std::string text = doc.dump();
  if (bad) text.pop_back();  // the closing '}'
  std::vector<std::string> tokens;
  for (size_t at = 0; at < text.size(); at += 4) tokens.push_back(text.substr(at, 4));
  return tokens;
}

std::vector<std::string> ReplyTokens(std::string_view text) {
  std::vector<std::string> tokens;
  for (size_t at = 0; at < text.size();) {
    const size_t space = text.find(' ', at + 1);
    const size_t end = space == std::string_view::npos ? text.size() : space;
    tokens.emplace_back(text.substr(at, end - at));
    at = end;
  }
  return tokens;
}

nlohmann::json Timings::ToJson() const {
  return {
      {"cache_n", cache_n},
      {"prompt_n", prompt_n},
      {"prompt_ms", prompt_ms},
      {"prompt_per_token_ms", prompt_per_token_ms},
      {"prompt_per_second", 1000.0 / prompt_per_token_ms},
      {"predicted_n", predicted_n},
      {"predicted_ms", predicted_ms},
      {"predicted_per_token_ms", predicted_per_token_ms},
      {"predicted_per_second", 1000.0 / predicted_per_token_ms},
  };
}

Timings MakeTimings(int prompt_n, int predicted_n, double tokens_per_second) {
  Timings t;
  t.prompt_n = prompt_n;
  t.predicted_n = predicted_n;
  t.prompt_per_token_ms = kPromptTokenMs;
  t.predicted_per_token_ms = tokens_per_second > 0 ? 1000.0 / tokens_per_second : kUnpacedTokenMs;
  t.prompt_ms = prompt_n * t.prompt_per_token_ms;
  t.predicted_ms = predicted_n * t.predicted_per_token_ms;
  return t;
}

std::vector<float> EmbeddingFor(std::string_view text, int dimensions) {
  std::vector<float> values(dimensions);
  const double phase = static_cast<double>(swapd::Fnv1a().Add(text).value() % 1000) / 100.0;
  double norm = 0;
  for (int i = 0; i < dimensions; ++i) {
    values[i] = static_cast<float>(std::sin(phase + i));
    norm += values[i] * values[i];
  }
  norm = std::sqrt(norm);
  if (norm > 0) {
    for (float& v : values) v = static_cast<float>(v / norm);
  }
  return values;
}

std::string Base64OfFloats(const std::vector<float>& values) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(values.size() * sizeof(float), '\0');
  // x86-64 and aarch64 Linux are little-endian, the byte order OpenAI clients expect.
  std::memcpy(bytes.data(), values.data(), bytes.size());
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t chunk = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) chunk |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) chunk |= static_cast<uint8_t>(bytes[i + 2]);
    out += kAlphabet[(chunk >> 18) & 63];
    out += kAlphabet[(chunk >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(chunk >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[chunk & 63] : '=';
  }
  return out;
}

std::string NextId(std::string_view prefix) {
  static std::atomic<uint64_t> counter{0};
  // The pid keeps ids of several fake servers apart.
  uint64_t state =
      swapd::Fnv1a().Add(std::to_string(::getpid()) + ":" + std::to_string(++counter)).value();
  std::string id(prefix);
  for (int i = 0; i < 32; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    id += static_cast<char>((state >> 59) < 26 ? 'a' + (state >> 59) : 'A' + ((state >> 33) % 26));
  }
  return id;
}

}  // namespace fake_backend
