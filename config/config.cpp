#include "config/config.h"

namespace swapd {

std::string Position::ToString() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string Diagnostic::ToString() const {
  return pos.ToString() + ": " + swapd::ToString(severity) + ": " + message;
}

const char* ToString(Diagnostic::Severity severity) {
  switch (severity) {
    case Diagnostic::Severity::kError:
      return "error";
    case Diagnostic::Severity::kWarning:
      return "warning";
    case Diagnostic::Severity::kHint:
      return "hint";
  }
  return "error";
}

nlohmann::json ToJson(const Diagnostic& d) {
  return {{"file", d.pos.file},
          {"line", d.pos.line},
          {"column", d.pos.column},
          {"severity", ToString(d.severity)},
          {"message", d.message}};
}

const ModelConfig* Config::FindModel(std::string_view id_or_alias) const {
  std::string key(id_or_alias);
  if (auto it = models.find(key); it != models.end()) return &it->second;
  if (auto it = aliases.find(key); it != aliases.end()) {
    if (auto m = models.find(it->second); m != models.end()) return &m->second;
  }
  return nullptr;
}

const PeerModelRef* Config::FindPeerModel(std::string_view name) const {
  auto it = peer_models.find(std::string(name));
  return it == peer_models.end() ? nullptr : &it->second;
}

const GroupConfig& Config::GroupOf(const ModelConfig& model) const {
  return groups.at(model.group);
}

}  // namespace swapd
