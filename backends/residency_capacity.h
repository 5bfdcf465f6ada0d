// Residency capacity: how many models may be resident at once on this node, under the group rules
// (or the matrix) and the memory budgets. It is what /metrics reports as `max_lora` to Kubernetes'
// endpoint picker, whose lora-affinity scorer reads "fewer running than max_lora" as "has room".
//
// The rule: the largest set of models that may run together by the group rules (DESIGN.md "Group
// semantics": a swap group contributes one member, a non-swap group all of them; an exclusive
// group runs beside persistent ones only, a non-exclusive, non-persistent one beside any
// non-exclusive or persistent ones) or by one combination of a matrix set, that also fits in the
// budgets when it is filled cheapest model first (each model's cost as the budget counts it:
// declared or learned, the larger). Exact for a RAM-only budget; with several budgeted
// dimensions the greedy fill is an estimate. A model that alone exceeds a budget never counts.
// Pure, no state: safe from any thread.
#pragma once

#include <map>
#include <string>

#include "backends/residency_policy.h"
#include "config/config.h"

namespace swapd {

// The largest share of a budgeted dimension (RAM, or one GPU's VRAM) that `cost` takes: 0.5 for
// half the RAM budget. May exceed 1. 0 without a budget.
double BudgetShare(const MemoryAmount& budget, const Footprint& cost);

// `costs`: each model's cost (a model missing costs nothing); `budget` empty: no budget.
int MaxResidentModels(const Config& config, const std::map<std::string, Footprint>& costs,
                      const MemoryAmount& budget);

}  // namespace swapd
