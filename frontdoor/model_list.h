// The shape every /v1/models entry shares (models, aliases, selectors, pins, peers' models), as
// llama-swap lists them. Pure; thread safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "backends/backend.h"
#include "config/config.h"

namespace swapd {

// {id, object: "model", created, owned_by, status: {value: loaded|unloaded}}. Clients tell
// llama-swap (and so swapd) from a plain server by owned_by "llama-swap" (ownedBy's default).
nlohmann::json ModelListEntry(const Config& config, const std::string& id, int64_t created,
                              bool loaded);

// A local model's `status` in /v1/models, as llama.cpp's router reports it: loaded (ready, or
// stopping: its process is still there), loading (starting) or unloaded; a failed start is
// unloaded with failed: true and exit_code (when its process exited).
nlohmann::json LocalModelStatus(const BackendInfo& backend);

// Adds a model's `capabilities` to its list entry as llama-swap renders them (OpenRouter's shape):
// architecture, capabilities, supported_parameters, context_length.
void AddCapabilities(const ModelCapabilities& caps, nlohmann::json& item);

}  // namespace swapd
