#include "config/store_settings.h"

#include "config/schema_keys.h"
#include "config/slot_cache_settings.h"

namespace swapd {

void ReadStoreSection(const YamlEntry& e, FieldReader& fields, Config& config, bool& set) {
  if (!fields.IsMapOrError(e, "") || !e.value->is_map()) return;
  fields.CheckKeys(*e.value, StoreKeys(), "store: ", "store.");
  const YamlEntry* path = e.value->Find("path");
  if (path == nullptr) return;
  if (auto v = fields.Text(*path, "store.")) {
    if (v->text.empty()) {
      fields.sink().Error(path->value->pos,
                          "store.path: must be a file path, or none for no history; got \"\"");
    } else {
      config.store_path = v->text == "none" ? "" : ResolveConfigPath(v->text, path->value->pos);
      set = true;
    }
  }
}

std::string DefaultStorePath(const GetEnvFunction& getenv) {
  auto get = [&](const char* name) -> std::string {
    auto v = getenv ? getenv(name) : ProcessEnv(name);
    return v ? *v : std::string();
  };
  if (std::string dir = get("STATE_DIRECTORY"); !dir.empty()) {
    return dir.substr(0, dir.find(':')) + "/swapd.db";  // systemd lists several with ':'
  }
  if (std::string xdg = get("XDG_STATE_HOME"); !xdg.empty() && xdg.front() == '/') {
    return xdg + "/swapd/swapd.db";
  }
  if (std::string home = get("HOME"); !home.empty() && home != "/") {
    return home + "/.local/state/swapd/swapd.db";
  }
  return "/var/lib/swapd/swapd.db";
}

}  // namespace swapd
