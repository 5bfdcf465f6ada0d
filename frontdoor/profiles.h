// The model a request names at request time: model ids, then the active profile's pins, then
// selectors (picked by the caller, see selector_choice.h), then aliases. Pure; thread safe.
#pragma once

#include <string>

#include "config/config.h"

namespace swapd {

struct ResolvedModel {
  const ModelConfig* model = nullptr;  // null: unknown, or disabled by the profile
  std::string id;  // the id the request names after the pin (for setParamsByID), else as asked
  const SelectorConfig* selector = nullptr;  // set (and model null) when `id` is a selector
  const PeerModelRef* peer = nullptr;        // set (and model null) when `id` is a peer's model
};

// Model ids always win; then a pin of the active profile (`profile`, "" for none) rewrites the
// id, or makes it unknown when its target is empty; then a selector is returned as such; then
// ids and aliases resolve as usual; last, a peer's model ("<peer>/<model>", or its bare name).
ResolvedModel ResolveModel(const Config& config, const std::string& profile,
                           const std::string& requested);

}  // namespace swapd
