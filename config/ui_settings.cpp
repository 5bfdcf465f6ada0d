#include "config/ui_settings.h"

#include <algorithm>
#include <cctype>

#include "config/schema_keys.h"

namespace swapd {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

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
    std::string name = Trim(item.text);
    if (name.empty()) continue;
    std::string key = Lower(name);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(std::move(key));
    names.push_back(std::move(name));
  }
  config.ui.session_id_headers = std::move(names);
}

}  // namespace swapd
