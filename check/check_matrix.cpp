#include "check/check_matrix.h"

#include "backends/scheduler_policy.h"

namespace swapd {
namespace {

// Enough to see a set's shape; a set that allows more is summarised.
constexpr size_t kShownCombinations = 32;

std::string Braced(const std::vector<std::string>& names) {
  std::string out = "{";
  for (const std::string& n : names) out += (out.size() > 1 ? ", " : "") + n;
  return out + "}";
}

bool InSomeSet(const MatrixConfig& matrix, const std::string& model) {
  for (const MatrixSet& set : matrix.sets) {
    for (const auto& combination : ExpandMatrixExpr(set.expr, SIZE_MAX, nullptr)) {
      if (std::find(combination.begin(), combination.end(), model) != combination.end()) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

void DescribeMatrix(const Config& config, std::ostream& o) {
  if (!config.matrix) return;
  const MatrixConfig& matrix = *config.matrix;
  o << "\nmatrix router: " << matrix.sets.size() << " set" << (matrix.sets.size() == 1 ? "" : "s")
    << " (any part of a combination may run together)\n";
  for (const MatrixSet& set : matrix.sets) {
    bool truncated = false;
    auto combinations = ExpandMatrixExpr(set.expr, kShownCombinations, &truncated);
    o << "  set " << set.name << ": " << set.dsl << "\n";
    for (const auto& c : combinations) o << "    " << Braced(c) << "\n";
    if (truncated) o << "    ... (more than " << kShownCombinations << " combinations)\n";
  }
  if (!matrix.evict_costs.empty()) {
    o << "  evict costs (others 1):";
    for (const auto& [model, cost] : matrix.evict_costs) o << " " << model << "=" << cost;
    o << "\n";
  }
  o << "  a load of each model evicts at least (the rest is chosen per load, least cost first):\n";
  const auto conflicts = ComputeMatrixConflicts(config);
  for (const auto& [id, model] : config.models) {
    const std::set<std::string>& evicts = conflicts.at(id);
    o << "    " << id << ": ";
    if (!InSomeSet(matrix, id)) {
      o << "in no set, runs alone\n";
    } else if (evicts.empty()) {
      o << "nothing\n";
    } else {
      o << Braced({evicts.begin(), evicts.end()}) << "\n";
    }
  }
}

nlohmann::json MatrixJson(const MatrixConfig& matrix, const Config& config) {
  nlohmann::json sets = nlohmann::json::array();
  for (const MatrixSet& set : matrix.sets) {
    bool truncated = false;
    auto combinations = ExpandMatrixExpr(set.expr, kShownCombinations, &truncated);
    sets.push_back({{"name", set.name},
                    {"dsl", set.dsl},
                    {"combinations", combinations},
                    {"truncated", truncated}});
  }
  nlohmann::json always = nlohmann::json::object();
  for (const auto& [id, evicts] : ComputeMatrixConflicts(config)) always[id] = evicts;
  return {{"sets", sets},
          {"vars", matrix.vars},
          {"evictCosts", matrix.evict_costs},
          {"alwaysEvicts", always}};
}

}  // namespace swapd
