// Request filters of a model, applied to the JSON body in llama-swap's order: useModelName
// (replaces "model"), stripParams (removes keys), setParams (sets keys), setParamsByID (sets the
// keys listed for the id the client asked for). The "model" key is never stripped or set by
// params. Pure; thread safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "config/config.h"

namespace swapd {

// Whether the model has a filter that may change a request body.
bool HasFilters(const ModelConfig& model);

// Applies the model's filters to `document`, a request for `requested_id` (the model's id or one
// of its aliases, as the client wrote it). Returns the new body text when a filter changed
// something, nullopt when nothing changed (the caller then forwards the original bytes untouched).
std::optional<std::string> ApplyFilters(const ModelConfig& model, const std::string& requested_id,
                                        nlohmann::json& document);

// A request for a peer's model: "model" becomes `model` (the peer's name for it), then the peer's
// stripParams and setParams. Returns the new body text, nullopt when nothing changed.
std::optional<std::string> ApplyPeerFilters(const PeerConfig& peer, const std::string& model,
                                            nlohmann::json& document);

}  // namespace swapd
