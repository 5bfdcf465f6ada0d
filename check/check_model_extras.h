// What `swapd check` shows of a model's healthCheckTimeout, timeouts, filters.setParamsByID and
// capabilities, and of the selectors, peers and profiles (the parts llama-swap added in 2026).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "config/config.h"

namespace swapd {

// Text lines, indented as the rest of the model's description.
void DescribeModelExtras(const ModelConfig& m, const Config& config, std::ostream& o);
// The same as JSON fields: healthCheckTimeout, setParamsByID, capabilities (null when unset).
nlohmann::json ModelExtrasJson(const ModelConfig& m, const Config& config);

// The selectors, the peers with the names their models go by, and the profiles with their pins;
// nothing when there are none.
void DescribeProfiles(const Config& config, std::ostream& o);
// {name: {description, pins: {id: target or null}}}.
nlohmann::json ProfilesJson(const Config& config);
// {id: {strategy, targets, spillover, unlisted}}.
nlohmann::json SelectorsJson(const Config& config);
// {id: {proxy, apiKey (whether one is set), models, names, stripParams, setParams, timeouts}}.
nlohmann::json PeersJson(const Config& config);

}  // namespace swapd
