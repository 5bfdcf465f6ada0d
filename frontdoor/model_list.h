// The shape every /v1/models entry shares (models, aliases, selectors, pins, peers' models), as
// llama-swap lists them. Pure; thread safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "config/config.h"

namespace swapd {

// {id, object: "model", created, owned_by, status: {value: loaded|unloaded}}. Clients tell
// llama-swap (and so swapd) from a plain server by owned_by "llama-swap" (ownedBy's default).
nlohmann::json ModelListEntry(const Config& config, const std::string& id, int64_t created,
                              bool loaded);

// Adds a model's `capabilities` to its list entry as llama-swap renders them (OpenRouter's shape):
// architecture, capabilities, supported_parameters, context_length.
void AddCapabilities(const ModelCapabilities& caps, nlohmann::json& item);

}  // namespace swapd
