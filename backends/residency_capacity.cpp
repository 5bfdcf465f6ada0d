#include "backends/residency_capacity.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "config/matrix.h"

namespace swapd {
namespace {

// One place in a set of models that run together: any one of `models` may fill it (a swap group
// runs one member at a time).
using Slot = std::vector<std::string>;

Footprint CostOf(const std::map<std::string, Footprint>& costs, const std::string& model) {
  auto it = costs.find(model);
  return it == costs.end() ? Footprint{} : it->second;
}

// How many of `slots` fill within `budget`, each with its cheapest model, cheapest slots first.
int Fill(const std::vector<Slot>& slots, const std::map<std::string, Footprint>& costs,
         const MemoryAmount& budget) {
  if (budget.empty()) return static_cast<int>(slots.size());
  std::vector<std::pair<double, Footprint>> chosen;
  for (const Slot& slot : slots) {
    std::optional<std::pair<double, Footprint>> best;
    for (const std::string& model : slot) {
      const Footprint cost = CostOf(costs, model);
      if (ExceedsBudget(budget, cost)) continue;
      const double share = BudgetShare(budget, cost);
      if (!best || share < best->first) best.emplace(share, cost);
    }
    if (best) chosen.push_back(*best);
  }
  std::stable_sort(chosen.begin(), chosen.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  Footprint total;
  int n = 0;
  for (const auto& [share, cost] : chosen) {
    Footprint next = total;
    next += cost;
    if (ExceedsBudget(budget, next)) continue;
    total = next;
    ++n;
  }
  return n;
}

void AddGroupSlots(const GroupConfig& group, std::vector<Slot>& slots) {
  if (group.members.empty()) return;
  if (group.swap) {
    slots.push_back(group.members);
    return;
  }
  for (const std::string& model : group.members) slots.push_back({model});
}

// Groups that may run together (scheduler_policy.h's rules, pairwise): a non-exclusive persistent
// group beside any; an exclusive one beside persistent ones only; a non-exclusive, non-persistent
// one beside non-exclusive or persistent ones. So every admissible set is the non-exclusive
// persistent groups plus one of: every exclusive persistent group, every non-exclusive
// non-persistent group, or one exclusive non-persistent group.
int MaxByGroups(const Config& config, const std::map<std::string, Footprint>& costs,
                const MemoryAmount& budget) {
  std::vector<Slot> base, exclusive_persistent, shared;
  std::vector<const GroupConfig*> exclusive;
  for (const auto& [name, group] : config.groups) {
    if (!group.exclusive && group.persistent) {
      AddGroupSlots(group, base);
    } else if (group.exclusive && group.persistent) {
      AddGroupSlots(group, exclusive_persistent);
    } else if (!group.exclusive) {
      AddGroupSlots(group, shared);
    } else {
      exclusive.push_back(&group);
    }
  }
  auto with = [&base](const std::vector<Slot>& more) {
    std::vector<Slot> slots = base;
    slots.insert(slots.end(), more.begin(), more.end());
    return slots;
  };
  int best =
      std::max(Fill(with(exclusive_persistent), costs, budget), Fill(with(shared), costs, budget));
  for (const GroupConfig* group : exclusive) {
    std::vector<Slot> own;
    AddGroupSlots(*group, own);
    best = std::max(best, Fill(with(own), costs, budget));
  }
  return best;
}

// Every combination of every set (a model in no set runs alone). Combinations beyond a bound are
// not weighed: a set that large admits more models than a node runs anyway.
int MaxByMatrix(const Config& config, const std::map<std::string, Footprint>& costs,
                const MemoryAmount& budget) {
  constexpr size_t kMaxCombinations = 4096;
  int best = 0;
  for (const auto& [id, model] : config.models) {
    best = std::max(best, Fill({{id}}, costs, budget));
  }
  for (const MatrixSet& set : config.matrix->sets) {
    bool truncated = false;
    for (const std::vector<std::string>& combination :
         ExpandMatrixExpr(set.expr, kMaxCombinations, &truncated)) {
      std::vector<Slot> slots;
      for (const std::string& model : combination) {
        if (config.models.count(model) != 0) slots.push_back({model});
      }
      best = std::max(best, Fill(slots, costs, budget));
    }
  }
  return best;
}

}  // namespace

double BudgetShare(const MemoryAmount& budget, const Footprint& cost) {
  double share = 0;
  if (budget.ram && *budget.ram > 0) {
    share = static_cast<double>(cost.ram) / static_cast<double>(*budget.ram);
  }
  for (const auto& [gpu, limit] : budget.vram) {
    auto it = cost.vram.find(gpu);
    if (it == cost.vram.end() || limit == 0) continue;
    share = std::max(share, static_cast<double>(it->second) / static_cast<double>(limit));
  }
  return share;
}

int MaxResidentModels(const Config& config, const std::map<std::string, Footprint>& costs,
                      const MemoryAmount& budget) {
  if (config.matrix) return MaxByMatrix(config, costs, budget);
  return MaxByGroups(config, costs, budget);
}

}  // namespace swapd
