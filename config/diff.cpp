#include "config/diff.h"

namespace swapd {

bool NeedsRestart(const ModelConfig& a, const ModelConfig& b) {
  return a.argv != b.argv || a.env != b.env || a.proxy != b.proxy ||
         a.check_endpoint != b.check_endpoint || a.stop_argv != b.stop_argv || a.group != b.group;
}

ConfigDiff DiffConfigs(const Config& before, const Config& after) {
  ConfigDiff diff;
  for (const auto& [id, model] : after.models) {
    auto old = before.models.find(id);
    if (old == before.models.end()) {
      diff.added.insert(id);
    } else if (NeedsRestart(old->second, model)) {
      diff.changed.insert(id);
    } else {
      diff.unchanged.insert(id);
    }
  }
  for (const auto& [id, model] : before.models) {
    if (after.models.count(id) == 0) diff.removed.insert(id);
  }
  return diff;
}

}  // namespace swapd
