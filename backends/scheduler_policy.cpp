#include "backends/scheduler_policy.h"

#include "backends/matrix_solver.h"

namespace swapd {
namespace {

struct GroupRules {
  bool swap = true;
  bool exclusive = true;
  bool persistent = false;
};

GroupRules RulesOf(const Config& config, const std::string& group) {
  auto it = config.groups.find(group);
  if (it == config.groups.end()) return GroupRules{};
  return GroupRules{it->second.swap, it->second.exclusive, it->second.persistent};
}

}  // namespace

std::map<std::string, std::set<std::string>> ComputeConflicts(const Config& config) {
  std::map<std::string, std::set<std::string>> conflicts;
  for (const auto& [id, model] : config.models) {
    const GroupRules rules = RulesOf(config, model.group);
    std::set<std::string>& stop = conflicts[id];
    for (const auto& [other_id, other] : config.models) {
      if (other_id == id) continue;
      if (other.group == model.group) {
        if (rules.swap) stop.insert(other_id);
      } else if (rules.exclusive && !RulesOf(config, other.group).persistent) {
        stop.insert(other_id);
      }
    }
  }
  return conflicts;
}

std::map<std::string, std::set<std::string>> ComputeMatrixConflicts(const Config& config) {
  std::map<std::string, std::set<std::string>> conflicts;
  const MatrixSolver solver(config.matrix.value_or(MatrixConfig{}));
  for (auto a = config.models.begin(); a != config.models.end(); ++a) {
    conflicts[a->first];
    for (auto b = std::next(a); b != config.models.end(); ++b) {
      if (solver.CanCoexist({a->first, b->first})) continue;
      conflicts[a->first].insert(b->first);
      conflicts[b->first].insert(a->first);
    }
  }
  return conflicts;
}

}  // namespace swapd
