// The memory budget as a pure function: which running models must stop so that another fits in
// the RAM and VRAM budgets (config `memory:`). It runs after the group or matrix rules have chosen
// their evictions, over the models that remain. Victims go in order of what stopping them costs
// (a model already stopping first, then the matrix evict cost), then least recently used; only
// models that free memory where the budget is exceeded are taken, and any that turn out not to be
// needed are kept. A model that must not be evicted (`swappable: false`) is never chosen: the
// decision then names it. Pure, no state: safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"

namespace swapd {

// What a model costs in memory: bytes of RAM, and of VRAM per GPU index.
struct Footprint {
  uint64_t ram = 0;
  std::map<int, uint64_t> vram;

  Footprint& operator+=(const Footprint& other);
  Footprint& operator-=(const Footprint& other);  // saturates at 0
  bool operator==(const Footprint&) const = default;
};

// Per dimension, the larger of the two.
Footprint Larger(const Footprint& a, const Footprint& b);
// A declaration as a footprint (unset RAM is 0).
Footprint FootprintOf(const MemoryAmount& amount);

struct ResidentModel {
  std::string model;
  Footprint cost;
  bool protect = false;      // `swappable: false`, or within its `minResidency`
  std::string protected_by;  // why, for messages; empty reads as "swappable: false"
  int64_t evict_cost = 1;    // 0 for a model that stops anyway
  int64_t last_used = 0;     // larger is more recent; busy models use INT64_MAX
};

struct BudgetDecision {
  enum class Verdict {
    kFits,       // nothing needs to stop
    kEvict,      // stopping `evict` makes it fit
    kProtected,  // only by stopping `protect` models, which must not stop
    kTooBig,     // the model alone exceeds a budget
  };
  Verdict verdict = Verdict::kFits;
  std::vector<std::string> evict;             // kEvict: in the order chosen
  std::vector<std::string> protected_models;  // kProtected: those holding the memory needed
  std::string why;                            // for the log and error messages
};

// Whether `model`, needing `need`, fits beside `resident` in `budget` (MemoryAmount: `ram` and
// `vram` per GPU; an unset dimension is unlimited).
BudgetDecision FitToBudget(const MemoryAmount& budget, const std::string& model,
                           const Footprint& need, const std::vector<ResidentModel>& resident);

// A protected model and why (ResidentModel::protected_by).
struct ProtectedModel {
  std::string model;
  std::string why;
};
// "it is protected (swappable: false)", or for several "they are protected (a: swappable: false;
// b: minResidency 300 s, 120 s left)".
std::string DescribeProtection(const std::vector<ProtectedModel>& models);

// Whether `total` exceeds `budget` anywhere.
bool ExceedsBudget(const MemoryAmount& budget, const Footprint& total);

}  // namespace swapd
