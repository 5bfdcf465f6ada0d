#include "config/ui_settings.h"

#include <algorithm>
#include <cctype>

#include "base/text.h"
#include "config/schema_keys.h"

namespace swapd {

// Out of line: an inline default list in Config trips GCC 12's -Wmaybe-uninitialized in the
// code that builds a Config.
UiSettings::UiSettings() : session_id_headers{"X-Session-ID", "X-Litellm-Session-Id"} {}

void ReadUiSection(const YamlEntry& e, FieldReader& fields, Config& config) {
  if (!fields.IsMapOrError(e, "")) return;
  fields.CheckKeys(*e.value, UiKeys(), "ui: ", "ui.");
  const YamlEntry* activity = e.value->Find("activity");
  if (activity == nullptr || !fields.IsMapOrError(*activity, "ui.")) return;
  fields.CheckKeys(*activity->value, UiActivityKeys(), "ui.activity: ", "ui.activity.");
  const YamlEntry* session_id = activity->value->Find("session_id");
  if (session_id == nullptr) return;
  std::vector<std::string> names;
  std::vector<std::string> seen;
  for (const RawText& item : fields.TextList(*session_id, "ui.activity.")) {
    std::string name(TrimSpace(item.text));
    if (name.empty()) continue;
    std::string key = AsciiLower(name);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(std::move(key));
    names.push_back(std::move(name));
  }
  config.ui.session_id_headers = std::move(names);
}

}  // namespace swapd
