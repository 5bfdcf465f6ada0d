// `swapd check`: loads the configuration, prints every diagnostic and the effective configuration
// (per model: group, argv, environment overrides, proxy, port, check endpoint, TTL) as text or
// JSON.
#pragma once

#include <ostream>

#include "config/config.h"
#include "daemon/cli.h"

namespace swapd {

// Returns the process exit code: 0 when the configuration is valid, 1 otherwise.
int RunCheck(const Options& options, std::ostream& out, std::ostream& err);

// The effective configuration, human-readable or as JSON (also used by tests).
std::string DescribeConfig(const Config& config);
std::string DescribeConfigJson(const Config& config);

}  // namespace swapd
