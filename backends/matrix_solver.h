// The matrix router's decision: which running models must stop so that a model may start. Sets
// (config/matrix.h) say which models may run together, with subset semantics: any part of a set
// may run. Among every combination containing the target, the solver picks the one whose running
// models outside it cost least to evict; ties go to the choice whose evicted models were used
// least recently, then to the set defined first (llama-swap breaks ties by definition order only).
// A model in no set runs alone.
//
// It never expands the Cartesian product: each query projects the expressions onto the few models
// that matter (the target and the running ones) as bitmasks, keeping only maximal projections.
// Immutable after construction: safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/matrix.h"

namespace swapd {

// A model that runs (or starts, or stops) now, as the solver weighs it.
struct MatrixResident {
  std::string model;
  int64_t cost = 1;       // what evicting it costs (0 for a model already stopping)
  int64_t last_used = 0;  // larger is more recent; busy models use INT64_MAX
};

struct MatrixDecision {
  bool in_a_set = false;           // false: the target is in no set and runs alone
  std::string set;                 // the chosen set's name
  std::string dsl;                 // its expression as written
  std::vector<std::string> evict;  // sorted
  int64_t cost = 0;                // the evicted models' total cost
  std::string why;                 // how the choice was made, for the log

  // `matrix: model=X set=S dsl="..." evict=[a, b] cost=N (why)`.
  std::string Describe(const std::string& target) const;
};

class MatrixSolver {
 public:
  explicit MatrixSolver(MatrixConfig config);

  // What starting `target` needs, given what runs now (the target itself is ignored there).
  // At most 63 running models are weighed; any beyond are evicted.
  MatrixDecision Choose(const std::string& target,
                        const std::vector<MatrixResident>& running) const;
  // Whether one combination of one set holds every model of `models`.
  bool CanCoexist(const std::vector<std::string>& models) const;

  const MatrixConfig& config() const { return config_; }

 private:
  MatrixConfig config_;
};

}  // namespace swapd
