// What /api/models shows of memory: each model's measured figures, declaration, cost and
// protection, and the budgets with what the running models use of them. Pure formatting.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/router.h"
#include "config/config.h"
#include "memory/footprint_monitor.h"

namespace swapd {

// {"ram": bytes|null, "vram": {"0": bytes, ...}}
nlohmann::json MemoryAmountJson(const MemoryAmount& amount);
nlohmann::json FootprintJson(const Footprint& footprint);

// The "memory" object of one model in /api/models. `measured` is null when never sampled.
nlohmann::json ModelMemoryJson(const ModelConfig* definition, const ModelSnapshot& snapshot,
                               const ModelMemory* measured);

// The top-level "memory" object of /api/models: budgets, use by the running models, GPU tool.
nlohmann::json MemorySummaryJson(const MemoryAmount& budget,
                                 const std::vector<ModelSnapshot>& models, const MemoryView& view);

}  // namespace swapd
