#include "config/slot_cache_settings.h"

#include <cmath>
#include <filesystem>

#include "base/stable_hash.h"

namespace swapd {
namespace {

bool IsPlainChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

}  // namespace

std::string ResolveConfigPath(const std::string& path, const Position& pos) {
  namespace fs = std::filesystem;
  fs::path p(path);
  if (p.is_relative()) p = fs::path(pos.file).parent_path() / p;
  std::error_code ec;
  fs::path absolute = fs::absolute(p, ec);
  return (ec ? p : absolute).lexically_normal().string();
}

bool ReadSlotCacheSetting(const YamlEntry& e, FieldReader& fields, Config& config) {
  const std::string& key = e.key->value;
  DiagnosticSink& sink = fields.sink();
  if (key == "slotCacheDir") {
    if (auto v = fields.Text(e, "")) {
      if (v->text.empty()) {
        sink.Error(e.value->pos, "slotCacheDir: must be a directory path, got \"\"");
      } else {
        config.slot_cache_dir = ResolveConfigPath(v->text, e.value->pos);
      }
    }
  } else if (key == "slotCacheMaxBytes") {
    if (auto v = fields.Text(e, "")) {
      if (auto bytes = ParseByteSize(v->text)) {
        config.slot_cache_max_bytes = *bytes;
      } else {
        sink.Error(e.value->pos,
                   "slotCacheMaxBytes: must be a size in bytes such as 21474836480, 20GiB or "
                   "512MiB; got \"" +
                       v->text + "\"");
      }
    }
  } else if (key == "slotCacheTimeout") {
    if (auto v = fields.Int(e, "")) {
      if (*v < 1) {
        sink.Error(e.value->pos,
                   "slotCacheTimeout: must be at least 1 second, got " + std::to_string(*v));
      } else {
        config.slot_cache_timeout = std::chrono::seconds(*v);
      }
    }
  } else {
    return false;
  }
  return true;
}

std::string DefaultSlotCacheDir(const GetEnvFunction& getenv) {
  auto get = [&](const char* name) -> std::string {
    auto v = getenv ? getenv(name) : ProcessEnv(name);
    return v ? *v : std::string();
  };
  if (std::string dir = get("CACHE_DIRECTORY"); !dir.empty()) {
    return dir.substr(0, dir.find(':')) + "/slots";  // systemd lists several with ':'
  }
  if (std::string xdg = get("XDG_CACHE_HOME"); !xdg.empty() && xdg.front() == '/') {
    return xdg + "/swapd/slots";
  }
  if (std::string home = get("HOME"); !home.empty() && home != "/") {
    return home + "/.cache/swapd/slots";
  }
  return "/var/cache/swapd/slots";
}

std::string SlotDirFor(const std::string& root, const std::string& model_id) {
  std::string name;
  bool changed = model_id.empty() || model_id == "." || model_id == "..";
  for (char c : model_id) {
    name += IsPlainChar(c) ? c : '_';
    changed = changed || !IsPlainChar(c);
  }
  if (changed) name += "-" + StableHash({model_id}).substr(0, 8);
  return (std::filesystem::path(root) / name).string();
}

std::optional<uint64_t> ParseByteSize(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  double number = 0;
  try {
    size_t used = 0;
    number = std::stod(std::string(text.substr(0, i)), &used);
    if (used != i) return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::string_view unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  struct Unit {
    std::string_view name;
    double factor;
  };
  static constexpr Unit kUnits[] = {{"", 1},
                                    {"B", 1},
                                    {"K", 1024.0},
                                    {"KB", 1e3},
                                    {"KiB", 1024.0},
                                    {"M", 1048576.0},
                                    {"MB", 1e6},
                                    {"MiB", 1048576.0},
                                    {"G", 1073741824},
                                    {"GB", 1e9},
                                    {"GiB", 1073741824},
                                    {"T", 1099511627776.0},
                                    {"TB", 1e12},
                                    {"TiB", 1099511627776.0}};
  for (const Unit& u : kUnits) {
    if (unit == u.name) {
      const double bytes = std::floor(number * u.factor);
      if (!std::isfinite(bytes) || bytes > 1.8e19) return std::nullopt;
      return static_cast<uint64_t>(bytes);
    }
  }
  return std::nullopt;
}

std::string StableHash(const std::vector<std::string>& parts) {
  Fnv1a hash;
  for (const std::string& part : parts) hash.Add(part).AddSeparator();
  return hash.Hex();
}

}  // namespace swapd
