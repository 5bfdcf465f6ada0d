// Before a backend starts: is something already listening where swapd will send the model's
// requests? A local proxy port taken by another process would make the new backend fail to bind
// while swapd's readiness check and requests reach the other process instead. Stateless; thread
// safe.
#pragma once

#include <set>
#include <string>

#include "base/status.h"
#include "config/config.h"

namespace swapd {

// Ok unless `proxy_url` names a loopback host (localhost, 127.0.0.1, [::1]) on which a TCP
// connection to its port succeeds now. The error names the port and the model.
Status CheckProxyPortFree(const std::string& model_id, const std::string& proxy_url);

// The loopback ports written as numbers in the config's models (whose cmd does not use ${PORT}):
// the ports those models' backends will listen on, never handed out for ${PORT}.
std::set<int> FixedLoopbackPorts(const Config& config);

// A loopback TCP port that was free a moment ago (the system picked it); -1 when none could be had.
// For a process swapd starts with a port of its own (`swapd bench`'s swapd), tests and benchmarks.
int FreeLoopbackPort();

}  // namespace swapd
