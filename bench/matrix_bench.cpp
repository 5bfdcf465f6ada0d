// matrix-bench: how long does the matrix router take to decide a load? A config of 20 models and
// 12 sets, each set a product of five 4-way choices (4^5 = 1024 combinations per set, 12288 in
// all), asked for a random model with 0 to 8 random models running. Against the same decisions made
// by expanding every combination (what a solver without projection does), in the same run.
// Results are for bench/README.md, section "Matrix decisions". Usage: matrix-bench
// [decisions=20000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backends/matrix_solver.h"

namespace {

using swapd::MatrixConfig;
using swapd::MatrixExpr;
using swapd::MatrixResident;
using Clock = std::chrono::steady_clock;

MatrixConfig TwelveSets() {
  MatrixConfig config;
  for (int s = 0; s < 12; ++s) {
    MatrixExpr all{MatrixExpr::Kind::kAll, "", {}};
    for (int f = 0; f < 5; ++f) {
      MatrixExpr any{MatrixExpr::Kind::kAny, "", {}};
      for (int k = 0; k < 4; ++k) {
        any.children.push_back(
            MatrixExpr{MatrixExpr::Kind::kModel, "m" + std::to_string((s + f * 4 + k) % 20), {}});
      }
      all.children.push_back(std::move(any));
    }
    config.sets.push_back({"s" + std::to_string(s), "", std::move(all)});
  }
  return config;
}

struct Query {
  std::string target;
  std::vector<MatrixResident> running;
};

// The least eviction cost over every expanded combination that holds the target.
int64_t BruteForceCost(const std::vector<std::vector<std::string>>& combos, const Query& q) {
  int64_t best = -1;
  for (const auto& combo : combos) {
    if (!std::binary_search(combo.begin(), combo.end(), q.target)) continue;
    int64_t cost = 0;
    for (const MatrixResident& r : q.running) {
      if (!std::binary_search(combo.begin(), combo.end(), r.model)) cost += r.cost;
    }
    if (best < 0 || cost < best) best = cost;
  }
  return best;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  const int decisions = argc > 1 ? std::atoi(argv[1]) : 20000;
  const MatrixConfig config = TwelveSets();
  const swapd::MatrixSolver solver(config);
  std::vector<std::vector<std::string>> combos;
  for (const auto& set : config.sets) {
    for (auto& combo : swapd::ExpandMatrixExpr(set.expr, 1 << 20, nullptr)) {
      std::sort(combo.begin(), combo.end());
      combos.push_back(std::move(combo));
    }
  }

  std::mt19937 rng(7);
  std::vector<Query> queries(static_cast<size_t>(decisions));
  for (Query& q : queries) {
    q.target = "m" + std::to_string(rng() % 20);
    std::set<std::string> running;
    const size_t n = rng() % 9;
    while (running.size() < n) {
      std::string m = "m" + std::to_string(rng() % 20);
      if (m != q.target) running.insert(m);
    }
    int64_t t = 0;
    for (const std::string& m : running) {
      q.running.push_back({m, 1 + static_cast<int64_t>(rng() % 5), ++t});
    }
  }

  std::vector<double> solver_us, brute_us;
  int mismatches = 0;
  for (const Query& q : queries) {
    auto t0 = Clock::now();
    swapd::MatrixDecision d = solver.Choose(q.target, q.running);
    auto t1 = Clock::now();
    int64_t brute = BruteForceCost(combos, q);
    auto t2 = Clock::now();
    solver_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    brute_us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
    if (d.in_a_set && d.cost != brute) ++mismatches;
  }
  std::printf("%d decisions, 20 models, 12 sets, %zu combinations when expanded\n", decisions,
              combos.size());
  std::printf("| solver | median | p99 | max |\n| --- | --- | --- | --- |\n");
  std::printf("| projection (swapd) | %.1f us | %.1f us | %.1f us |\n", Percentile(solver_us, 0.5),
              Percentile(solver_us, 0.99), Percentile(solver_us, 1.0));
  std::printf("| full expansion | %.1f us | %.1f us | %.1f us |\n", Percentile(brute_us, 0.5),
              Percentile(brute_us, 0.99), Percentile(brute_us, 1.0));
  std::printf("median ratio: %.1fx faster; cost mismatches: %d\n",
              Percentile(brute_us, 0.5) / Percentile(solver_us, 0.5), mismatches);
  return mismatches == 0 ? 0 : 1;
}
