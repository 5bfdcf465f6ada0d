#include "frontdoor/profiles.h"

namespace swapd {

ResolvedModel ResolveModel(const Config& config, const std::string& profile,
                           const std::string& requested) {
  if (auto it = config.models.find(requested); it != config.models.end()) {
    return {&it->second, requested};
  }
  std::string id = requested;
  if (auto p = config.profiles.find(profile); p != config.profiles.end()) {
    if (auto pin = p->second.pins.find(requested); pin != p->second.pins.end()) {
      if (pin->second.empty()) return {nullptr, requested};
      id = pin->second;
    }
  }
  if (auto s = config.selectors.find(id); s != config.selectors.end()) {
    return {nullptr, id, &s->second};
  }
  if (const ModelConfig* model = config.FindModel(id)) return {model, id};
  return {nullptr, id, nullptr, config.FindPeerModel(id)};
}

}  // namespace swapd
