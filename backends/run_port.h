// Where one run of a model's backend will listen, decided just before its process is spawned. A
// model whose cmd uses ${PORT} gets a port from the PortAllocator (its configured one when free,
// else the next free one above) and its port-bearing fields expanded for it; the move is logged.
// A port written as a number is only checked (backends/port_check.h). Called by ProcessBackend's
// starting thread; thread safe as the PortAllocator is.
#pragma once

#include <set>

#include "backends/port_allocator.h"
#include "base/status.h"
#include "config/config.h"

namespace swapd {

struct RunPortRequest {
  int configured_port = 0;  // ModelConfig::port as loaded
  std::set<int> avoid;      // the fixed ports of other models (FixedLoopbackPorts)
  // The run before, in the same start, could not bind `model.port`: this is the once more.
  bool again = false;
};

// For a model whose cmd uses ${PORT}: a lease on the run's port, with `model`'s port-bearing
// fields rewritten for it. For any other model an empty lease, `model` unchanged, and an error
// when its fixed loopback port is taken. Errors name the model. A model without cmd: no check.
Result<PortLease> PlaceRun(ModelConfig& model, const RunPortRequest& request, PortAllocator& ports);

}  // namespace swapd
