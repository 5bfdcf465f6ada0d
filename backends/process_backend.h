// ProcessBackend: the real Backend (backends/backend.h). It runs one model's backend process with a
// Launcher, captures its output into a LogRing (and swapd's log when logToStdout is "upstream" or
// "both"), polls its readiness with a ReadinessProbe, stops it (cmdStop or SIGTERM to every
// process of its run, then SIGKILL after unloadTimeout; the stop waits for the whole run, not
// only for the process it started) and notices at once when it exits on its own.
// States (one transition function, illegal transitions are logged as bugs):
//   stopped/failed -> starting -> ready -> stopping -> stopped
//   starting -> failed (exited, or not ready in time: then via stopping -> failed)
//   starting -> stopping (Stop() cancels the start); ready -> failed (crash);
//   failed -> stopped (Stop(); the reason stays in Info().last_error)
// While it starts, its output is also read for the load's progress (backends/load_progress.h,
// the partial line of dots included): Info().load.
// When the process exits without a Stop() (while starting or ready), whatever is left of its run
// (backends/containment.h) is SIGKILLed, and the exit callback gets the exit status and the log
// tail.
// Ports: a model whose cmd uses ${PORT} gets its port from a PortAllocator at each start (its
// configured port when free, else the next free one above) and runs with its port-bearing fields
// expanded for that port (config/model_port.h); if its process still exits during start-up
// saying the address is in use, the start goes on once more on a new port (once, invisibly to
// Start() callers). Info() tells the port and proxy of the run. A port written as a number is
// only checked: taken, the start fails with a message that says so.
// Thread safe: every method may be called from any thread. Per running process there is one
// monitor thread (output, exit detection, reaping); a start's readiness checks run on the thread
// that called Start() first, and a stop runs on the thread that called Stop(). A model whose cmd
// uses ${SLOT_DIR} saves its llama-server slots before a planned stop of a ready process and
// restores them once ready again, before Start() returns (backends/slot_cache.h). A model with
// `prefetch: true` has its files read into the page cache first (ProcessBackendOptions::prefetch).
// The exit callback
// runs on the monitor thread; it must not block and must not destroy the backend. Do not destroy
// a ProcessBackend while another thread is inside one of its methods.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "backends/backend.h"
#include "backends/launcher.h"
#include "backends/log_ring.h"
#include "backends/port_allocator.h"
#include "backends/readiness_probe.h"
#include "backends/slot_cache.h"

namespace swapd {

struct ProcessBackendOptions {
  Launcher* launcher = nullptr;  // null: DefaultLauncher()
  ProbeFactory probe_factory;    // null: DefaultProbeFactory()
  size_t log_ring_bytes = LogRing::kDefaultCapacityBytes;
  // Called with every output line of every backend (e.g. to feed /logs/stream), on the backend's
  // monitor thread; must be quick and must not block.
  std::function<void(const std::string& model_id, std::string_view line)> on_output_line;
  // The slot cache's files, shared by all models (backends/slot_store.h). Null: each backend of
  // a model whose cmd uses ${SLOT_DIR} makes its own from the config.
  std::shared_ptr<SlotStore> slot_store;
  // Called for a model with `prefetch: true` while it starts, before its process is spawned, on
  // the starting thread (the model reads as starting meanwhile). `cancelled` turns true when a
  // Stop() cancels the start; the call should then return soon. Null: no prefetch.
  std::function<void(const ModelConfig& model, const std::function<bool()>& cancelled)> prefetch;
  // Where ${PORT}'s ports come from. Null: the process's (ProcessPortAllocator()).
  PortAllocator* ports = nullptr;
};

class ProcessBackend : public Backend {
 public:
  ProcessBackend(ModelConfig model, const Config& config, ProcessBackendOptions options = {});
  ~ProcessBackend() override;  // stops the process

  Status Start() override;
  void Stop() override;
  BackendInfo Info() const override;
  std::string LogTail(size_t lines) const override;
  void SetExitCallback(std::function<void(const std::string& reason)> callback) override;

 private:
  struct Running;
  struct OutputSink;

  // Requires mu_. The one place state_ changes.
  void Transition(BackendState to);
  // Requires mu_. Ends the current start with `status` (for Start() callers that joined it).
  void FinishStart(Status status);
  // Requires mu_ (may release it while waiting). Waits for start `gen` to end; returns its result.
  Status JoinStart(std::unique_lock<std::mutex>& lock, uint64_t gen);
  // Requires mu_ and state kStarting. Gives the run its port (or checks a fixed one) and spawns
  // the process; on failure the start has failed (kFailed). `again`: the first run of this start
  // could not bind its port.
  Status SpawnRun(bool again);
  // Requires mu_ and state kStarting. Polls readiness until ready, failed, cancelled or timed out,
  // or until port_taken_.
  Status WaitReady(std::unique_lock<std::mutex>& lock, uint64_t gen);
  // Requires mu_. Why WaitReady stopped before its end: the start's result, or port_taken_.
  Status Interrupted(std::unique_lock<std::mutex>& lock, uint64_t gen);
  // Requires mu_. Whether `run` exited during start-up because its port was taken, and may try
  // once more on another.
  bool PortTaken(const Running& run) const;
  // Requires mu_ and state kStopping, entered by the caller. Stops proc_ (gracefully or not),
  // reaps it, then enters kStopped (kFailed when pending_failure_). Releases mu_ while waiting.
  void RunStop(std::unique_lock<std::mutex>& lock, bool graceful);
  // Require mu_ (released while they look). Whether any process of `run` is left; waiting until
  // none is or `deadline` passes.
  bool StillRunning(std::unique_lock<std::mutex>& lock, const Running& run);
  void WaitRunGone(std::unique_lock<std::mutex>& lock, const Running& run,
                   std::chrono::steady_clock::time_point deadline);
  // On the monitor thread, once, when `run`'s process has exited: kills what is left of its group,
  // reaps it, and reports an unexpected exit.
  void OnExit(const std::shared_ptr<Running>& run);
  std::string TailForMessage() const;
  // Requires mu_ (released while it works) and state kStarting. Restores the slot cache; returns
  // false when the start was cancelled meanwhile.
  bool RestoreSlots(std::unique_lock<std::mutex>& lock, uint64_t gen);

  // The model as configured, except that its port-bearing fields (argv, stop_argv, env, proxy,
  // check_endpoint, port) are those of the current or last run: written only by the thread that
  // starts, with mu_ held; read with mu_ held or by that thread.
  ModelConfig model_;
  const std::chrono::seconds health_check_timeout_;
  Launcher* const launcher_;
  const ProbeFactory probe_factory_;
  const std::shared_ptr<OutputSink> sink_;  // shared with monitor threads
  // Null unless cmd uses ${SLOT_DIR}. Used without mu_ by the thread that starts or stops.
  const std::unique_ptr<SlotCache> slots_;
  // ProcessBackendOptions::prefetch when the model asks for it, else null.
  const std::function<void(const ModelConfig&, const std::function<bool()>&)> prefetch_;
  PortAllocator* const ports_;
  const std::set<int> fixed_ports_;  // of the other models: never given to this one
  const int configured_port_;        // ModelConfig::port as loaded

  mutable std::mutex mu_;
  std::condition_variable cv_;
  BackendState state_ = BackendState::kStopped;  // Guarded by mu_.
  std::chrono::steady_clock::time_point since_;  // Guarded by mu_.
  std::string last_error_;                       // Guarded by mu_.
  std::optional<int> last_exit_code_;            // Guarded by mu_.
  std::shared_ptr<Running> proc_;                // Guarded by mu_.
  uint64_t start_gen_ = 0;                       // Guarded by mu_.
  uint64_t finished_gen_ = 0;                    // Guarded by mu_.
  Status start_status_;                          // Guarded by mu_.
  bool pending_failure_ = false;                 // Guarded by mu_.
  bool port_taken_ = false;  // Guarded by mu_. The run could not bind its port: run once more.
  std::function<void(const std::string&)> exit_callback_;  // Guarded by mu_.
  std::atomic<uint64_t> output_seq_{0};  // bumped on output while starting: probe at once
};

// The BackendFactory that makes ProcessBackends (what swapd uses).
BackendFactory MakeProcessBackendFactory(ProcessBackendOptions options = {});

}  // namespace swapd
