#include "backends/matrix_solver.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "base/text.h"

namespace swapd {
namespace {

using Mask = uint64_t;
constexpr size_t kMaxBits = 64;

// The bit of each relevant model; models outside the map project to nothing.
using Bits = std::map<std::string, int, std::less<>>;

// Keeps the maximal masks only: a mask inside another keeps fewer of the relevant models, so it
// can never make a cheaper (or an equally cheap but smaller) eviction.
void KeepMaximal(std::vector<Mask>& masks) {
  std::sort(masks.begin(), masks.end());
  masks.erase(std::unique(masks.begin(), masks.end()), masks.end());
  std::vector<Mask> out;
  for (Mask m : masks) {
    bool inside = std::any_of(masks.begin(), masks.end(),
                              [m](Mask other) { return other != m && (m & other) == m; });
    if (!inside) out.push_back(m);
  }
  masks = std::move(out);
}

std::vector<Mask> Project(const MatrixExpr& e, const Bits& bits) {
  switch (e.kind) {
    case MatrixExpr::Kind::kModel: {
      auto it = bits.find(e.model);
      return {it == bits.end() ? Mask{0} : Mask{1} << it->second};
    }
    case MatrixExpr::Kind::kAny: {
      std::vector<Mask> out;
      for (const MatrixExpr& child : e.children) {
        std::vector<Mask> part = Project(child, bits);
        out.insert(out.end(), part.begin(), part.end());
      }
      KeepMaximal(out);
      return out;
    }
    case MatrixExpr::Kind::kAll: {
      std::vector<Mask> out = {0};
      for (const MatrixExpr& child : e.children) {
        std::vector<Mask> part = Project(child, bits);
        std::vector<Mask> next;
        next.reserve(out.size() * part.size());
        for (Mask a : out) {
          for (Mask b : part) next.push_back(a | b);
        }
        KeepMaximal(next);
        out = std::move(next);
      }
      return out;
    }
  }
  return {};
}

// One way to start the target, ordered by what the solver prefers (smaller is better).
struct Candidate {
  int64_t cost = 0;
  int64_t newest_evicted = std::numeric_limits<int64_t>::min();  // least recently used first
  size_t set_index = 0;                                          // definition order
  std::vector<std::string> evict;                                // fewer, then by name

  auto Key() const { return std::tie(cost, newest_evicted, set_index); }
  bool operator<(const Candidate& o) const {
    if (Key() != o.Key()) return Key() < o.Key();
    if (evict.size() != o.evict.size()) return evict.size() < o.evict.size();
    return evict < o.evict;
  }
};

}  // namespace

std::string MatrixDecision::Describe(const std::string& target) const {
  if (!in_a_set) {
    return "matrix: model=" + target + " is in no set, runs alone: evict=[" + Join(evict) +
           "] cost=" + std::to_string(cost);
  }
  return "matrix: model=" + target + " set=" + set + " dsl=\"" + dsl + "\" evict=[" + Join(evict) +
         "] cost=" + std::to_string(cost) + " (" + why + ")";
}

MatrixSolver::MatrixSolver(MatrixConfig config) : config_(std::move(config)) {}

MatrixDecision MatrixSolver::Choose(const std::string& target,
                                    const std::vector<MatrixResident>& running) const {
  Bits bits;
  bits.emplace(target, 0);
  std::vector<const MatrixResident*> weighed;  // weighed[i] has bit i + 1
  std::vector<std::string> beyond;             // running models past the 63 the masks hold
  for (const MatrixResident& r : running) {
    if (bits.count(r.model) != 0) continue;
    if (bits.size() == kMaxBits) {
      beyond.push_back(r.model);
      continue;
    }
    bits.emplace(r.model, static_cast<int>(bits.size()));
    weighed.push_back(&r);
  }
  auto evicted_by = [&](Mask kept, size_t set_index) {
    Candidate c;
    c.set_index = set_index;
    c.evict = beyond;
    for (size_t i = 0; i < weighed.size(); ++i) {
      if ((kept >> (i + 1)) & 1) continue;
      c.cost += weighed[i]->cost;
      c.newest_evicted = std::max(c.newest_evicted, weighed[i]->last_used);
      c.evict.push_back(weighed[i]->model);
    }
    std::sort(c.evict.begin(), c.evict.end());
    return c;
  };

  std::optional<Candidate> best, runner_up;  // the runner-up evicts something else
  for (size_t i = 0; i < config_.sets.size(); ++i) {
    for (Mask kept : Project(config_.sets[i].expr, bits)) {
      if ((kept & 1) == 0) continue;  // without the target
      Candidate c = evicted_by(kept, i);
      if (!best || c < *best) {
        if (best && best->evict != c.evict) runner_up = std::move(best);
        best = std::move(c);
      } else if (c.evict != best->evict && (!runner_up || c < *runner_up)) {
        runner_up = std::move(c);
      }
    }
  }

  MatrixDecision d;
  if (!best) {
    best = evicted_by(1, 0);  // keeps the target only
    d.evict = best->evict;
    d.cost = best->cost;
    d.why = "in no set: runs alone";
    return d;
  }
  const MatrixSet& chosen = config_.sets[best->set_index];
  d.in_a_set = true;
  d.set = chosen.name;
  d.dsl = chosen.dsl;
  d.evict = best->evict;
  d.cost = best->cost;
  if (!runner_up) {
    d.why = "the only choice";
  } else {
    const std::string other = "set " + config_.sets[runner_up->set_index].name;
    if (runner_up->cost != best->cost) {
      d.why =
          "least eviction cost; next best " + other + " costs " + std::to_string(runner_up->cost);
    } else if (runner_up->newest_evicted != best->newest_evicted) {
      d.why = "tie on cost with " + other + ", broken by least recently used";
    } else {
      d.why = "tie with " + other + ", broken by definition order";
    }
  }
  return d;
}

bool MatrixSolver::CanCoexist(const std::vector<std::string>& models) const {
  Bits bits;
  for (const std::string& m : models) {
    if (bits.size() == kMaxBits) return false;
    bits.emplace(m, static_cast<int>(bits.size()));
  }
  const Mask all = bits.size() == kMaxBits ? ~Mask{0} : (Mask{1} << bits.size()) - 1;
  for (const MatrixSet& set : config_.sets) {
    for (Mask m : Project(set.expr, bits)) {
      if (m == all) return true;
    }
  }
  return false;
}

}  // namespace swapd
