// A model on another port than the one its ${PORT} was given at load: the fields a backend uses
// (argv, cmdStop, env, proxy, checkEndpoint) expanded again from ModelConfig::port_template, so
// that a backend whose configured port is taken can run on a free one. Only the port-bearing
// fields change; filters.setParams and metadata keep the configured port (they are request
// bodies and listings, not where the process listens).
// Pure functions; thread safe.
#pragma once

#include "config/config.h"

namespace swapd {

// Whether the model's port is swapd's to choose: its cmd uses ${PORT}. A port written as a
// number in cmd and proxy is left as written.
inline bool PortIsChosen(const ModelConfig& model) { return model.port_template.has_value(); }

// Rewrites `model`'s port-bearing fields and `port` for `port`. Nothing else of it changes, and
// nothing at all when its cmd does not use ${PORT}.
void ApplyPort(ModelConfig& model, int port);

// `model` with its port-bearing fields for `port` (a copy; see ApplyPort).
ModelConfig ModelForPort(ModelConfig model, int port);

}  // namespace swapd
