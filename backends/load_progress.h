// LoadProgress: what a starting backend's own output says about how far its load is. llama-server
// (and its forks) print, in order: the model loader's metadata lines ("llama_model_loader: ..."),
// the tensor loader's ("load_tensors: ..."), then one '.' per percent of tensor data read, on a
// line that gets its newline only at 100%, then the context's set-up ("llama_context: ...",
// "llama_kv_cache...") and a warm-up run ("common_init_from_params: warming up ..."), and finally
// "main: model loaded" / "... starting the main loop". Since May 2026 ("logs : reduce") every
// line starts with a time and a level ("0.00.071.357 I load_tensors: ..."), and at the default
// verbosity only the server's own lines come: "srv    load_model: loading model '...'", then
// "srv    load_model: initializing, n_slots = ..." once the tensors are in, then
// "srv  llama_server: model loaded". LoadOutputParser turns those lines (and the partial line of
// dots) into a stage and a share done. A backend that prints none of them (vLLM,
// other servers) leaves the parser at kProcess with no share: the caller then estimates from time.
// LoadOutputParser is pure (no clock, no I/O) and not synchronized: one per start, fed by one
// thread; LoadWatch shares one between threads.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace swapd {

enum class LoadStage { kProcess, kMetadata, kTensors, kContext, kWarmup, kReady };
// "starting" (the process runs, nothing parsed yet), "metadata", "tensors", "context", "warmup",
// "ready": the `stage` of /api/events' loading event while a start goes on.
const char* ToString(LoadStage stage);

struct LoadProgress {
  LoadStage stage = LoadStage::kProcess;
  // Share of the whole load done, 0..1; unset until the output said something parseable.
  std::optional<double> fraction;
};

class LoadOutputParser {
 public:
  // A whole output line (without its newline).
  void Line(std::string_view line);
  // The line being written, not ended yet (llama-server's dots); may be called again as it grows.
  void Partial(std::string_view partial);

  const LoadProgress& progress() const { return progress_; }

 private:
  void Enter(LoadStage stage);
  // `text` starts with the dots of the tensor loader's progress; `ended`: its line is whole.
  void Dots(std::string_view text, bool ended);

  LoadProgress progress_;
  int percent_ = 0;     // of tensor data, from the dots
  int dots_ended_ = 0;  // dots on lines already ended
};

// A LoadOutputParser shared by the thread that reads a backend's output and those that ask how
// its start goes. It parses only between Begin() and End() (a serving backend's lines cost an
// atomic load, no more). Thread safe.
class LoadWatch {
 public:
  void Begin();  // a start: from nothing again
  void End();    // the start ended: lines are no longer parsed
  void Line(std::string_view line);
  void Partial(std::string_view partial);
  LoadProgress Progress() const;

 private:
  std::atomic<bool> parsing_{false};
  mutable std::mutex mu_;
  LoadOutputParser parser_;  // Guarded by mu_
};

// How a start under way looks: its stage, the share done and the seconds left, the last two
// perhaps unknown. The output says "ready" a moment before the readiness probe agrees; until the
// Router reports ready, such a start shows stage "warmup" at 0.99, so that nothing that reads a
// start under way (the loading event, sendLoadingState's text) ever says done early.
struct LoadEstimate {
  const char* stage = "starting";  // ToString(LoadStage), never "ready"
  std::optional<double> progress;  // 0..0.99
  std::optional<double> eta_seconds;
};

// Combines what the output says with the time: `elapsed` since the start began, `expected` the
// model's usual load time (unset or zero when unknown). With a parsed share past the first
// percents, the rest is extrapolated from the rate so far, and the expected time sharpens it
// while the share is still small; without one, progress is elapsed / expected. Pure.
LoadEstimate EstimateLoad(const LoadProgress& parsed, std::chrono::milliseconds elapsed,
                          std::optional<std::chrono::milliseconds> expected);

}  // namespace swapd
