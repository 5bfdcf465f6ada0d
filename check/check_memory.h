// What `swapd check` shows of memory: the budgets, each model's declaration, protection and model
// files (size and how much is in the page cache now), and the page-cache cliff: a warning when the
// models that run together have more model files than the RAM can keep cached.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "config/config.h"

namespace swapd {

// "memory:" lines after the globals; nothing when no memory key is used.
void DescribeMemoryBudget(const Config& config, std::ostream& o);
// A model's memory lines (declared memory, pageCache, swappable, model files, and what the
// history store at config.store_path learned of this definition, when that file exists).
void DescribeModelMemory(const ModelConfig& m, const Config& config, std::ostream& o);
// {budget: {ram, vram}, onProtected, sampleInterval} for the JSON config.
nlohmann::json MemoryBudgetJson(const Config& config);
// {memory: {ram, vram}, pageCache, swappable, modelFiles: [{path, bytes, cachedBytes}],
// learned: {ram, vram, at} or null} of a model.
nlohmann::json ModelMemoryCheckJson(const ModelConfig& m, const Config& config);

// The page-cache cliff: for every set of models that run together (a group with swap: false, or
// the ungrouped models under a budget), a warning at the group when their model files plus their
// declared RAM exceed the RAM budget (or, without one, `machine_ram`; 0 = unknown).
std::vector<Diagnostic> PageCacheWarnings(const Config& config, uint64_t machine_ram);

}  // namespace swapd
