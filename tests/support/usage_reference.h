// The usage counts of one JSON document read the slow, obvious way: parse the whole document,
// then look up "usage" and "timings". UsageScanner reads them with a SAX handler instead; tests
// and fuzz_usage compare the two on the same documents. Header-only; test code.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "frontdoor/usage_scanner.h"

namespace swapd::testing {

inline void ReferenceRead(const nlohmann::json& object, const char* key,
                          std::optional<double>& out) {
  auto it = object.find(key);
  if (it != object.end() && it->is_number()) out = it->get<double>();
}

inline void ReferenceRead(const nlohmann::json& object, const char* key,
                          std::optional<int64_t>& out) {
  auto it = object.find(key);
  if (it == object.end()) return;
  if (it->is_number_unsigned()) {
    uint64_t value = it->get<uint64_t>();
    if (value <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      out = static_cast<int64_t>(value);
    }
  } else if (it->is_number_integer()) {
    out = it->get<int64_t>();
  } else if (it->is_number_float()) {
    double value = it->get<double>();
    if (value >= -9223372036854775808.0 && value < 9223372036854775808.0) {
      out = static_cast<int64_t>(value);
    }
  }
}

// What UsageScanner(false) fed `body` whole should return.
inline Usage ReferenceUsage(std::string_view body) {
  Usage usage;
  nlohmann::json doc =
      nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return usage;
  if (auto it = doc.find("usage"); it != doc.end() && it->is_object()) {
    ReferenceRead(*it, "prompt_tokens", usage.prompt_tokens);
    ReferenceRead(*it, "completion_tokens", usage.completion_tokens);
    ReferenceRead(*it, "input_tokens", usage.prompt_tokens);
    ReferenceRead(*it, "output_tokens", usage.completion_tokens);
  }
  if (auto it = doc.find("timings"); it != doc.end() && it->is_object()) {
    ReferenceRead(*it, "prompt_per_second", usage.prompt_per_second);
    ReferenceRead(*it, "predicted_per_second", usage.predicted_per_second);
    ReferenceRead(*it, "cache_n", usage.cached_tokens);
    ReferenceRead(*it, "prompt_n", usage.prompt_processed);
    if (!usage.prompt_tokens) ReferenceRead(*it, "prompt_n", usage.prompt_tokens);
    if (!usage.completion_tokens) ReferenceRead(*it, "predicted_n", usage.completion_tokens);
  }
  return usage;
}

inline bool SameUsage(const Usage& a, const Usage& b) {
  return a.prompt_tokens == b.prompt_tokens && a.completion_tokens == b.completion_tokens &&
         a.cached_tokens == b.cached_tokens && a.prompt_processed == b.prompt_processed &&
         a.prompt_per_second == b.prompt_per_second &&
         a.predicted_per_second == b.predicted_per_second;
}

}  // namespace swapd::testing
