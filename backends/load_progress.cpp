#include "backends/load_progress.h"

#include <algorithm>

namespace swapd {
namespace {

// Where each stage starts in the whole load's share. Reading the tensors is most of a load (the
// file's bytes go through memory), so the dots cover 5%..85%; the context's buffers and the
// warm-up run share the rest.
constexpr double kMetadataAt = 0.02;
constexpr double kTensorsAt = 0.05;
constexpr double kTensorsSpan = 0.80;
constexpr double kContextAt = 0.88;
constexpr double kWarmupAt = 0.94;

// Below this share the rate so far says little (the metadata lines come at once), so the ETA
// needs the expected time.
constexpr double kRateTrustedFrom = 0.10;

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

double Seconds(std::chrono::milliseconds d) { return static_cast<double>(d.count()) / 1000.0; }

// `line` without llama.cpp's log prefix: a time since start ("0.00.071.357": digits and dots)
// and a level letter, each followed by a space.
std::string_view WithoutLogPrefix(std::string_view line) {
  const size_t time_end = line.find_first_not_of("0123456789.");
  if (time_end == 0 || time_end == std::string_view::npos || line[time_end] != ' ' ||
      std::count(line.begin(), line.begin() + time_end, '.') < 2) {
    return line;
  }
  std::string_view rest = line.substr(time_end + 1);
  if (rest.size() >= 2 && std::string_view("DIWE").find(rest[0]) != std::string_view::npos &&
      rest[1] == ' ') {
    rest.remove_prefix(2);
  }
  return rest;
}

}  // namespace

const char* ToString(LoadStage stage) {
  switch (stage) {
    case LoadStage::kProcess:
      return "starting";
    case LoadStage::kMetadata:
      return "metadata";
    case LoadStage::kTensors:
      return "tensors";
    case LoadStage::kContext:
      return "context";
    case LoadStage::kWarmup:
      return "warmup";
    case LoadStage::kReady:
      return "ready";
  }
  return "starting";
}

void LoadOutputParser::Enter(LoadStage stage) {
  // Stages only advance: a later line of an earlier kind (a loader line printed by a draft
  // model or an mmproj after the main model's tensors) does not move the bar back.
  if (stage < progress_.stage) return;
  progress_.stage = stage;
  double at = progress_.fraction.value_or(0.0);
  switch (stage) {
    case LoadStage::kProcess:
      return;
    case LoadStage::kMetadata:
      at = kMetadataAt;
      break;
    case LoadStage::kTensors:
      at = kTensorsAt + kTensorsSpan * percent_ / 100.0;
      break;
    case LoadStage::kContext:
      at = kContextAt;
      break;
    case LoadStage::kWarmup:
      at = kWarmupAt;
      break;
    case LoadStage::kReady:
      at = 1.0;
      break;
  }
  progress_.fraction = std::max(at, progress_.fraction.value_or(0.0));
}

void LoadOutputParser::Dots(std::string_view text, bool ended) {
  // The tensor loader's progress: one '.' per percent. Another thread's log line may land in the
  // middle of the dots' line ("......srv  ...\n", then the rest of the dots on a line of their
  // own), so the leading dots of each piece add up.
  if (progress_.stage > LoadStage::kTensors) return;
  const size_t run = std::min(text.find_first_not_of('.'), text.size());
  if (run == 0) return;
  percent_ = std::max(percent_, std::min<int>(100, dots_ended_ + static_cast<int>(run)));
  if (ended) dots_ended_ += static_cast<int>(run);
  Enter(LoadStage::kTensors);
}

void LoadOutputParser::Line(std::string_view line) {
  if (!line.empty() && line.front() == '.') return Dots(line, /*ended=*/true);
  line = WithoutLogPrefix(line);
  if (StartsWith(line, "llama_model_loader:") || StartsWith(line, "print_info:") ||
      StartsWith(line, "llm_load_print_meta:") || StartsWith(line, "llama_model_load_from_file") ||
      Contains(line, "load_model: loading model")) {
    return Enter(LoadStage::kMetadata);
  }
  if (StartsWith(line, "load_tensors:") || StartsWith(line, "llm_load_tensors:")) {
    return Enter(LoadStage::kTensors);
  }
  if (StartsWith(line, "llama_context:") || StartsWith(line, "llama_kv_cache") ||
      StartsWith(line, "llama_new_context_with_model:") || StartsWith(line, "graph_reserve:") ||
      Contains(line, "load_model: initializing")) {
    if (progress_.stage == LoadStage::kTensors) percent_ = 100;  // the dots' line has ended
    return Enter(LoadStage::kContext);
  }
  if (Contains(line, "warming up the model")) return Enter(LoadStage::kWarmup);
  // Not "HTTP server is listening": llama-server says that before it loads anything.
  if (Contains(line, "main: model loaded") || Contains(line, "llama_server: model loaded") ||
      Contains(line, "starting the main loop")) {
    return Enter(LoadStage::kReady);
  }
}

void LoadOutputParser::Partial(std::string_view partial) { Dots(partial, /*ended=*/false); }

void LoadWatch::Begin() {
  std::lock_guard lock(mu_);
  parser_ = LoadOutputParser();
  parsing_ = true;
}

void LoadWatch::End() { parsing_ = false; }

void LoadWatch::Line(std::string_view line) {
  if (!parsing_.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(mu_);
  parser_.Line(line);
}

void LoadWatch::Partial(std::string_view partial) {
  if (!parsing_.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(mu_);
  parser_.Partial(partial);
}

LoadProgress LoadWatch::Progress() const {
  std::lock_guard lock(mu_);
  return parser_.progress();
}

LoadEstimate EstimateLoad(const LoadProgress& parsed, std::chrono::milliseconds elapsed,
                          std::optional<std::chrono::milliseconds> expected) {
  LoadEstimate out;
  constexpr double kMost = 0.99;  // 1 is the Router's word, not the output's
  if (parsed.stage == LoadStage::kReady) {
    out.stage = ToString(LoadStage::kWarmup);
    out.progress = kMost;
    out.eta_seconds = 0.0;
    return out;
  }
  out.stage = ToString(parsed.stage);
  const bool known = expected && expected->count() > 0;
  const double by_time = known ? Seconds(elapsed) / Seconds(*expected) : 0.0;
  std::optional<double> eta_by_time;
  if (known) eta_by_time = std::max(0.0, Seconds(*expected - elapsed));
  if (!parsed.fraction) {
    if (known) {
      out.progress = std::min(kMost, by_time);
      out.eta_seconds = eta_by_time;
    }
    return out;
  }
  const double f = std::clamp(*parsed.fraction, 0.0, kMost);
  out.progress = f;
  std::optional<double> eta_by_rate;
  if (f >= kRateTrustedFrom) eta_by_rate = Seconds(elapsed) * (1.0 - f) / f;
  if (eta_by_rate && eta_by_time) {
    // The rate says more as the share grows; the history says more at the start.
    out.eta_seconds = f * *eta_by_rate + (1.0 - f) * *eta_by_time;
  } else if (eta_by_rate) {
    out.eta_seconds = eta_by_rate;
  } else {
    out.eta_seconds = eta_by_time;
  }
  return out;
}

}  // namespace swapd
