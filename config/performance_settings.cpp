#include "config/performance_settings.h"

#include <cmath>
#include <optional>

#include "base/go_duration.h"
#include "config/schema_keys.h"
#include "config/yaml_scalar.h"

namespace swapd {
namespace {

constexpr double kMinEverySeconds = 5;
// Far beyond any use (the ring holds one hour), and small enough to fit in milliseconds.
constexpr double kMaxEverySeconds = 86400;

// A number is seconds, as swapd's other durations; text is a Go duration, as llama-swap's.
std::optional<double> EverySeconds(const YamlNode& v) {
  if (!v.is_scalar()) return std::nullopt;
  const nlohmann::json scalar = ScalarToJson(v);
  if (scalar.is_number()) return scalar.get<double>();
  if (scalar.is_string()) return ParseGoDuration(scalar.get<std::string>());
  return std::nullopt;
}

}  // namespace

void ReadPerformanceSection(const YamlEntry& e, FieldReader& fields, Config& config) {
  if (!fields.IsMapOrError(e, "")) return;
  fields.CheckKeys(*e.value, PerformanceKeys(), "performance: ", "performance.");
  for (const auto& entry : e.value->entries) {
    const std::string& key = entry.key->value;
    const YamlNode& v = *entry.value;
    if (key == "disabled") {
      if (auto disabled = fields.Bool(entry, "performance."))
        config.performance.disabled = *disabled;
    } else if (key == "every") {
      if (v.is_null()) continue;
      const std::optional<double> seconds = EverySeconds(v);
      if (!seconds || !std::isfinite(*seconds)) {
        fields.sink().Error(v.pos,
                            "performance.every: expected a duration such as \"5s\" or a "
                            "number of seconds, got " +
                                Describe(v));
      } else if (*seconds < kMinEverySeconds || *seconds > kMaxEverySeconds) {
        fields.sink().Error(
            v.pos, "performance.every: must be at least 5s (and at most 24h), got " + Describe(v));
      } else {
        config.performance.every =
            std::chrono::milliseconds(static_cast<int64_t>(std::llround(*seconds * 1000)));
      }
    }
  }
}

}  // namespace swapd
