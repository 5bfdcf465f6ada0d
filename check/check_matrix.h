// What `swapd check` shows of a matrix router: each set expanded into the combinations it allows,
// the eviction costs, and for every model the models a load of it always evicts.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "config/config.h"

namespace swapd {

// Text for people; nothing when the config uses groups.
void DescribeMatrix(const Config& config, std::ostream& o);
// The same as JSON: {sets: [{name, dsl, combinations, truncated}], evictCosts, alwaysEvicts}.
nlohmann::json MatrixJson(const MatrixConfig& matrix, const Config& config);

}  // namespace swapd
