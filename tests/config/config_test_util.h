// Helpers shared by the config tests: parse a YAML text with a fixed environment, and look for
// a diagnostic by severity, message fragment and position.
#pragma once

#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "config/loader.h"

namespace swapd::testing {

using Env = std::map<std::string, std::string>;

inline LoadOptions OptionsWithEnv(Env env, bool strict = false) {
  LoadOptions o;
  o.strict = strict;
  o.getenv = [env = std::move(env)](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  return o;
}

inline LoadResult Parse(std::string_view yaml, Env env = {}, bool strict = false) {
  return ParseConfig(yaml, "config.yaml", OptionsWithEnv(std::move(env), strict));
}

// The first diagnostic whose message contains `fragment`, or nullptr.
inline const Diagnostic* FindDiag(const LoadResult& r, std::string_view fragment) {
  for (const auto& d : r.diagnostics) {
    if (d.message.find(fragment) != std::string::npos) return &d;
  }
  return nullptr;
}

inline int CountSeverity(const LoadResult& r, Diagnostic::Severity s) {
  int n = 0;
  for (const auto& d : r.diagnostics) n += d.severity == s ? 1 : 0;
  return n;
}

inline std::string At(const Diagnostic* d) {
  return d ? std::to_string(d->pos.line) + ":" + std::to_string(d->pos.column) : "(none)";
}

// The model `id` of a config that must have loaded (fails the test otherwise).
inline const ModelConfig& Model(const LoadResult& r, const std::string& id) {
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  auto it = r.config->models.find(id);
  REQUIRE(it != r.config->models.end());
  return it->second;
}

}  // namespace swapd::testing
