// BenchRunner: `swapd bench`'s measurements, made through a swapd like any client (BenchClient).
// Per model: unload everything, load it and time the cold start, check that the machine is quiet,
// then the measured runs (streamed chat completions at temperature 0 with a synthetic prompt of
// the asked size, a different one per run, the prompt cache off), then the quality gates. A duo
// loads both members and runs both at once. A swap loads the partner, makes the model's files
// cold or warm in the page cache, and times a request for the model to its first token (the
// partner's stop, the model's load and the prompt). A backend that fails marks its row and the
// bench goes on. Run() is called from one thread; it starts its own threads for a duo and the quiet
// guard.
#pragma once

#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "scoreboard/bench_client.h"
#include "scoreboard/bench_result.h"
#include "scoreboard/gates.h"
#include "scoreboard/quiet_guard.h"

namespace swapd {

struct BenchPlan {
  std::vector<std::string> models;  // benched alone; with no duos either: every listed model
  std::vector<std::pair<std::string, std::string>> duos;
  // Swaps between two models, measured each way, cold and warm (bench_swap.cpp).
  std::vector<std::pair<std::string, std::string>> swaps;
  int runs = 3;
  int prompt_tokens = 512;
  int gen_tokens = 128;
  std::vector<Gate> gates;  // empty: no gates
  std::string output_dir;   // a failed gate's answer goes to <output_dir>/<model>-<gate>.txt
  bool strict = false;      // a busy machine before a model's runs refuses that model
  NoiseLimits noise;
  // Process trees that are the bench's own work besides the backends (the swapd it drives).
  std::vector<int> own_pids;
  // --compare-router: the llama-server router the swaps are also made through; "" for none.
  std::string router_url;
};

struct BenchOutcome {
  std::vector<BenchRow> rows;
  bool refused = false;  // --strict refused at least one row (machine busy)
};

class BenchRunner {
 public:
  // Does not own `client`, which must outlive the runner. Progress lines go to `progress`.
  BenchRunner(const BenchClient& client, BenchPlan plan, std::ostream& progress);
  ~BenchRunner();
  BenchRunner(const BenchRunner&) = delete;
  BenchRunner& operator=(const BenchRunner&) = delete;

  BenchOutcome Run();

 private:
  BenchRow Solo(const std::string& model);
  std::pair<BenchRow, BenchRow> Duo(const std::string& a, const std::string& b);
  // `model` swapped in while `partner` holds the machine, its files `cache` ("cold" or "warm"),
  // or warm with a conversation that its slot cache saved and restored ("slot": the restored slot
  // used; "no slot": ignored). `router`: through llama.cpp's router instead of swapd (null:
  // swapd).
  BenchRow Swap(const std::string& model, const std::string& partner, const std::string& cache,
                const BenchClient* router);
  // One measured swap of row.model into `row`'s lists; false (row.error set) when it failed.
  bool SwapOnce(BenchRow& row, const std::vector<std::string>& files, int run,
                const BenchClient* router, std::vector<double>& ttft, std::vector<double>& load,
                std::vector<double>& read, std::vector<double>& cached);
  // The partner loaded (through swapd or the router); false (row.error set) when it was not.
  bool LoadPartner(BenchRow& row, const BenchClient* router);
  // Whether swapd saves and restores the model's slots (its cmd uses ${SLOT_DIR}).
  bool HasSlotCache(const std::string& model) const;
  // Unloads everything, loads `model` and fills row.load_seconds, or row.error.
  bool LoadCold(BenchRow& row, bool unload_first);
  // The quiet check before the runs. False when --strict refuses the row (row.error set).
  bool CheckQuiet(std::vector<BenchRow*> rows);
  // `runs` measured runs of row.model into `row`.
  void MeasureRuns(BenchRow& row);
  void RunGates(BenchRow& row);
  std::string ConfigHash(const std::string& model) const;
  void RefreshExcluded();
  void Say(const std::string& line);

  const BenchClient& client_;
  const BenchPlan plan_;
  std::ostream& progress_;
  std::mutex progress_mu_;  // a duo's two threads report at once
  bool refused_ = false;

  std::mutex excluded_mu_;
  std::vector<int> excluded_;  // Guarded by excluded_mu_: own_pids plus the backends' pids
  std::unique_ptr<QuietGuard> guard_;
};

// The text of measured run `run` (1-based): about `tokens` tokens of plain English words,
// starting with the run number so that no two runs share a cached prefix. Used by tests.
std::string SyntheticPrompt(int run, int tokens);

// The median of the values >= 0 (unknowns are < 0); -1 when there is none.
double MedianOfKnown(std::vector<double> values);

}  // namespace swapd
