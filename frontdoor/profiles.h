// Profiles at request time: the id a request names, once the active profile's pins apply. Pure;
// thread safe.
#pragma once

#include <string>

#include "config/config.h"

namespace swapd {

struct ResolvedModel {
  const ModelConfig* model = nullptr;  // null: unknown, or disabled by the profile
  std::string id;  // the id the request names after the pin (for setParamsByID), else as asked
};

// Model ids always win; then a pin of the active profile (`profile`, "" for none) rewrites the
// id, or makes it unknown when its target is empty; then ids and aliases resolve as usual.
ResolvedModel ResolveModel(const Config& config, const std::string& profile,
                           const std::string& requested);

}  // namespace swapd
