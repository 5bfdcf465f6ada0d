// FootprintMonitor: measures what every running model really holds: the resident memory of its
// process group, its memory on each GPU (nvidia-smi, else rocm-smi; none when neither is there) and
// how much of its model files (GGUF) sits in the page cache. Each sample tells the Router the
// model's learned footprint (the memory budget counts the larger of it and the declaration): RAM is
// VmRSS, or for `pageCache: keep` the anonymous memory plus the whole files; VRAM per GPU; the
// largest seen during the current run. Samples run on one thread every memory.sampleInterval, and
// soon after a model becomes ready; the GPU tool runs every 10 s (at once for a new backend) and
// model files are looked at every 30 s. The latest figures feed /api/models, /metrics and the log.
// Thread safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/router.h"
#include "config/config.h"
#include "config/live_config.h"
#include "memory/history_store.h"
#include "memory/memory_meter.h"

namespace swapd {

// What was last measured of one model.
struct ModelMemory {
  std::string definition;          // ModelConfig::slot_key these figures are for
  bool from_history = false;       // `learned` came from the store, not measured since start
  std::vector<std::string> files;  // its model files (ModelFilesOf its argv)
  FileCache cache;                 // their size and page-cache residency, every 30 s
  std::chrono::steady_clock::time_point files_checked;
  bool measured = false;        // it ran and was measured at least once
  bool running = false;         // it was ready at the last sample
  int pid = 0;                  // of the run last measured
  ProcessMemory process;        // while it ran (the last sample)
  std::map<int, int64_t> vram;  // GPU index -> bytes (kUnknownBytes); empty: none or no tool
  Footprint learned;            // what the Router was told
  std::chrono::system_clock::time_point measured_at;
  Footprint recorded;  // what the store got last, and when (steady clock)
  std::chrono::steady_clock::time_point recorded_at;
};

struct MemoryView {
  std::map<std::string, ModelMemory> models;
  std::string gpu_tool;   // the tool that answered; empty when none
  std::string gpu_error;  // why the last GPU reading failed
  std::map<int, GpuDevice> gpus;
  uint64_t samples = 0;
  std::string store_path;                 // the history store; empty when none
  std::string store_error;                // its last failure; empty while it works
  std::chrono::milliseconds interval{0};  // 0: sampling is off
};

class FootprintMonitor {
 public:
  // Starts sampling at once unless config.memory.sampleInterval is 0. With a `store`, the learned
  // footprints of each model definition are recorded there (when they change, at least once a
  // minute while it runs) and read back on start, so that the budget knows them before the
  // models run again.
  // Reads the configuration from `live` at every sample. `router` and `live` are not owned and
  // must outlive the monitor.
  FootprintMonitor(Router& router, const LiveConfig& live,
                   std::unique_ptr<HistoryStore> store = nullptr);
  ~FootprintMonitor();  // stops and joins the sampling thread
  FootprintMonitor(const FootprintMonitor&) = delete;
  FootprintMonitor& operator=(const FootprintMonitor&) = delete;

  // A reload took `next` into service (a LiveConfig subscriber): its sampleInterval applies at
  // once, its model files and keep flags from the next sample.
  void ConfigChanged(const Config& next);
  // Samples soon (a model became ready, or finished a request): at most once a second.
  void SampleSoon();
  MemoryView View() const;
  // The last `limit` records of `model` in the history store, newest first (any definition).
  // kUnavailable when there is no store (store.path: none, or it could not be opened).
  Result<std::vector<FootprintRecord>> History(const std::string& model, int limit) const;
  // Prometheus text: budgets, each model's cost, VRAM, files and page cache, the GPU tool.
  std::string RenderPrometheus(const std::vector<ModelSnapshot>& models) const;

 private:
  void Loop();
  void Sample();
  // Records what changed since the last record (sampling thread; no lock held).
  void RecordHistory(std::map<std::string, ModelMemory>& models);

  Router& router_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  const LiveConfig& live_;
  // Guarded by mu_:
  MemoryView view_;
  // Written under mu_; SampleSoon reads it without: every proxied request asks for a sample, and
  // a wake of this thread for each (a lock and a futex call on the request's thread, a switch on
  // this one) took about 7% of a core under a flood of small requests (bench/README.md).
  std::atomic<bool> soon_{false};
  // The sampling thread's only:
  std::chrono::steady_clock::time_point gpu_read_;
  const std::unique_ptr<HistoryStore> store_;
  std::map<std::pair<std::string, std::string>, Footprint> history_;  // read once at start
  bool history_read_ = false;
  bool stop_ = false;
  std::thread thread_;
};

// What this machine has (MemTotal, and each GPU's total memory from nvidia-smi or rocm-smi), for
// `auto` budgets.
MachineMemory ReadMachineMemory();

}  // namespace swapd
