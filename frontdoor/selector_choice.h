// Which target of a selector serves the next request, from the targets' states and loads.
// Pure; thread safe (the round-robin counter is the caller's, atomic).
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

#include "backends/backend.h"
#include "config/config.h"

namespace swapd {

struct TargetLoad {
  BackendState state = BackendState::kStopped;
  int busy = 0;  // requests in flight plus queued
};

// `loads[i]` belongs to `selector.targets[i]`. Returns the index of the chosen target.
size_t ChooseTarget(const SelectorConfig& selector, const std::vector<TargetLoad>& loads,
                    std::atomic<size_t>& round_robin);

}  // namespace swapd
