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

// The rule by which a model of group `mine` stops one of group `theirs`.
enum class Rule { kNone, kSwap, kExclusive };

Rule RuleFor(const Config& config, const std::string& mine, const std::string& theirs) {
  const GroupRules rules = RulesOf(config, mine);
  if (theirs == mine) return rules.swap ? Rule::kSwap : Rule::kNone;
  return rules.exclusive && !RulesOf(config, theirs).persistent ? Rule::kExclusive : Rule::kNone;
}

}  // namespace

std::map<std::string, std::set<std::string>> ComputeConflicts(const Config& config) {
  std::map<std::string, std::set<std::string>> conflicts;
  for (const auto& [id, model] : config.models) {
    std::set<std::string>& stop = conflicts[id];
    for (const auto& [other_id, other] : config.models) {
      if (other_id != id && RuleFor(config, model.group, other.group) != Rule::kNone) {
        stop.insert(other_id);
      }
    }
  }
  return conflicts;
}

std::string ConflictReason(const Config& config, const std::string& model,
                           const std::string& other) {
  auto mine = config.models.find(model);
  auto theirs = config.models.find(other);
  if (mine == config.models.end() || theirs == config.models.end() || model == other) return "";
  const std::string& group = mine->second.group;
  switch (RuleFor(config, group, theirs->second.group)) {
    case Rule::kSwap:
      if (group == kDefaultGroup) return "both are in no group, and ungrouped models swap";
      return "same group \"" + group + "\", whose members swap (swap: true)";
    case Rule::kExclusive:
      if (group == kDefaultGroup) {
        return "\"" + model +
               "\" is in no group, and ungrouped models are exclusive: loading one stops the "
               "other groups";
      }
      return "group \"" + group + "\" is exclusive: loading a member stops the other groups";
    case Rule::kNone:
      break;
  }
  return "";
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
