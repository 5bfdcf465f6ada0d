#include "scoreboard/bench_runner.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <latch>
#include <thread>

#include "base/stable_hash.h"
#include "base/text.h"
#include "base/unix_time.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

// A model's cold start may take many minutes (a 35B model read from disk); swapd's own
// healthCheckTimeout ends a start that takes too long, this only stops the bench hanging.
constexpr auto kLoadDeadline = std::chrono::minutes(60);
constexpr auto kLoadPoll = std::chrono::milliseconds(20);
constexpr auto kQuietWindow = std::chrono::seconds(1);

// Common words, about one token each for llama-style tokenizers. Not "JSON": the fake backend
// answers a prompt with that word in JSON.
constexpr std::array<const char*, 32> kWords = {
    "the",    "river", "stone", "light", "morning", "garden", "house",  "quiet",
    "old",    "road",  "green", "field", "small",   "bird",   "window", "water",
    "summer", "tree",  "long",  "wind",  "over",    "under",  "city",   "hill",
    "night",  "warm",  "bread", "table", "door",    "boat",   "and",    "then"};

// A file name made of the model's and the gate's names (ids may hold '/' or ':').
std::string SafeFileName(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return name;
}

std::string StartFailure(const ModelState& m) {
  if (!m.last_error.empty()) return m.last_error;
  std::string tail;
  const size_t n = m.last_log_lines.size();
  for (size_t i = n > 5 ? n - 5 : 0; i < n; ++i)
    tail += (tail.empty() ? "" : " | ") + m.last_log_lines[i];
  return tail.empty() ? "it stopped while loading" : tail;
}

// The quiet guard's verdict over the measured runs, added to what the check before them said.
void MarkNoise(const NoiseReport& during, std::initializer_list<BenchRow*> rows) {
  if (!during.noisy) return;
  for (BenchRow* row : rows) {
    row->noisy = true;
    row->noise +=
        (row->noise.empty() ? "" : "; ") + std::string("during the runs: ") + during.reason;
  }
}

}  // namespace

std::string SyntheticPrompt(int run, int tokens) {
  std::string text = "Run " + std::to_string(run) + ". Go on with this story:";
  uint64_t state = 2654435761u * static_cast<uint64_t>(run) + 12345;
  for (int i = 7; i < tokens; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    text += ' ';
    text += kWords[(state >> 33) % kWords.size()];
  }
  return text;
}

double MedianOfKnown(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !(v >= 0); }),
               values.end());
  if (values.empty()) return -1;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

BenchRunner::BenchRunner(const BenchClient& client, BenchPlan plan, std::ostream& progress)
    : client_(client), plan_(std::move(plan)), progress_(progress), excluded_(plan_.own_pids) {
  guard_ = std::make_unique<QuietGuard>(plan_.noise, [this] {
    std::lock_guard lock(excluded_mu_);
    return excluded_;
  });
}

BenchRunner::~BenchRunner() = default;

void BenchRunner::Say(const std::string& line) {
  std::lock_guard lock(progress_mu_);
  progress_ << "swapd bench: " << line << std::endl;
}

void BenchRunner::RefreshExcluded() {
  Result<std::vector<ModelState>> models = client_.Models();
  std::vector<int> pids = plan_.own_pids;
  if (models.ok()) {
    for (const ModelState& m : models.value()) {
      if (m.pid > 0) pids.push_back(m.pid);
    }
  }
  std::lock_guard lock(excluded_mu_);
  excluded_ = std::move(pids);
}

BenchOutcome BenchRunner::Run() {
  BenchOutcome outcome;
  std::vector<std::string> models = plan_.models;
  if (models.empty() && plan_.duos.empty() && plan_.swaps.empty()) {
    Result<std::vector<std::string>> listed = client_.ListModels();
    if (!listed.ok()) {
      BenchRow row;
      row.model = "(all)";
      row.error = "cannot list the models: " + listed.status().message();
      row.finished_at = UnixNow();
      outcome.rows.push_back(std::move(row));
      return outcome;
    }
    // Only the local models (GET /api/models): not selectors, peers' models or aliases.
    Result<std::vector<ModelState>> local = client_.Models();
    for (const std::string& id : listed.value()) {
      if (!local.ok() || FindModelState(local.value(), id) != nullptr) models.push_back(id);
    }
  }
  for (const std::string& model : models) outcome.rows.push_back(Solo(model));
  for (const auto& [a, b] : plan_.duos) {
    auto [ra, rb] = Duo(a, b);
    outcome.rows.push_back(std::move(ra));
    outcome.rows.push_back(std::move(rb));
  }
  std::unique_ptr<BenchClient> router;
  if (!plan_.router_url.empty()) router = std::make_unique<BenchClient>(plan_.router_url, "");
  // Through swapd, then (its backends stopped) through the router.
  std::vector<const BenchClient*> vias = {nullptr};
  if (router) vias.push_back(router.get());
  for (const BenchClient* via : vias) {
    if (via != nullptr) (void)client_.UnloadAll();
    for (const auto& [a, b] : plan_.swaps) {
      for (const auto& [model, partner] : {std::pair{a, b}, std::pair{b, a}}) {
        std::vector<std::string> caches = {"cold", "warm"};
        // The router keeps no slots across a swap: the slot rows are swapd's alone.
        if (via == nullptr && HasSlotCache(model)) caches.insert(caches.end(), {"slot", "no slot"});
        for (const std::string& cache : caches) {
          outcome.rows.push_back(Swap(model, partner, cache, via));
        }
      }
    }
  }
  outcome.refused = refused_;
  return outcome;
}

std::string BenchRunner::ConfigHash(const std::string& model) const {
  // Preferred: the daemon's own definition hash (its cmd and env, GET /api/models "definition").
  // A swapd without it: a hash of the model's /v1/models entry without its changing fields.
  Result<std::vector<ModelState>> models = client_.Models();
  if (models.ok()) {
    const ModelState* m = FindModelState(models.value(), model);
    if (m != nullptr && !m->definition.empty()) return m->definition;
  }
  Result<nlohmann::json> entry = client_.ListEntry(model);
  if (!entry.ok() || entry.value().is_null()) return "";
  nlohmann::json stable = entry.value();
  stable.erase("status");
  stable.erase("created");
  return Fnv1a().Add(stable.dump()).Hex();
}

bool BenchRunner::LoadCold(BenchRow& row, bool unload_first) {
  if (unload_first) {
    if (Status unloaded = client_.UnloadAll(); !unloaded.ok()) {
      row.error = "cannot unload the models: " + unloaded.message();
      return false;
    }
  }
  Result<std::vector<ModelState>> before = client_.Models();
  if (!before.ok()) {
    row.error = before.status().message();
    return false;
  }
  const ModelState* was = FindModelState(before.value(), row.model);
  if (was == nullptr) {
    row.error = "not a model of this swapd's config (GET /api/models does not list it)";
    return false;
  }
  const int failures_before = was->start_failures;
  Say(row.model + ": loading");
  const auto start = Clock::now();
  if (Status load = client_.Load(row.model); !load.ok()) {
    row.error = "load failed: " + load.message();
    return false;
  }
  bool seen_starting = false;
  while (Clock::now() - start < kLoadDeadline) {
    Result<std::vector<ModelState>> now = client_.Models();
    if (!now.ok()) {
      row.error = "while loading: " + now.status().message();
      return false;
    }
    const ModelState* m = FindModelState(now.value(), row.model);
    if (m == nullptr) {
      row.error = "it left the config while loading";
      return false;
    }
    if (m->state == "ready") {
      row.load_seconds = std::chrono::duration<double>(Clock::now() - start).count();
      Say(row.model + ": loaded in " + FixedPoint(row.load_seconds, 2) + " s");
      return true;
    }
    if (m->start_failures > failures_before || (seen_starting && m->state != "starting")) {
      row.error = "failed to start: " + StartFailure(*m);
      return false;
    }
    seen_starting |= m->state == "starting";
    std::this_thread::sleep_for(kLoadPoll);
  }
  row.error = "not ready after " + std::to_string(kLoadDeadline.count()) + " minutes";
  return false;
}

bool BenchRunner::CheckQuiet(std::vector<BenchRow*> rows) {
  RefreshExcluded();
  const NoiseReport report = guard_->Check(kQuietWindow);
  if (!report.noisy) return true;
  for (BenchRow* row : rows) {
    if (plan_.strict) {
      row->error = "machine busy: " + report.reason;
    } else {
      row->noisy = true;
      row->noise = "before the runs: " + report.reason;
    }
  }
  Say(rows.front()->model + ": the machine is busy: " + report.reason +
      (plan_.strict ? " (--strict: not measured)" : ""));
  if (plan_.strict) refused_ = true;
  return !plan_.strict;
}

void BenchRunner::MeasureRuns(BenchRow& row) {
  std::vector<double> ttft, prefill, decode;
  bool all_from_timings = true;
  for (int run = 1; run <= plan_.runs; ++run) {
    const nlohmann::json body = {
        {"model", row.model},
        {"messages", {{{"role", "user"}, {"content", SyntheticPrompt(run, plan_.prompt_tokens)}}}},
        {"stream", true},
        {"stream_options", {{"include_usage", true}}},
        {"temperature", 0},
        {"max_tokens", plan_.gen_tokens},
        // llama-server: no reuse of a cached prompt (it would fake the prefill speed), and no
        // early end of generation (the decode speed is over gen-tokens tokens).
        {"cache_prompt", false},
        {"ignore_eos", true}};
    Result<ChatStreamStats> answer = client_.StreamChat(body);
    if (!answer.ok() || !answer.value().error.empty() || answer.value().pieces == 0) {
      const std::string why = !answer.ok()                    ? answer.status().message()
                              : !answer.value().error.empty() ? answer.value().error
                                                              : "the answer had no tokens";
      row.error = "run " + std::to_string(run) + ": " + why;
      Say(row.model + ": " + row.error);
      break;
    }
    const RunMeasure m = MeasureRun(answer.value());
    ttft.push_back(m.ttft_ms);
    prefill.push_back(m.prefill_tps);
    decode.push_back(m.decode_tps);
    all_from_timings &= m.from_timings;
    ++row.runs;
    Say(row.model + ": run " + std::to_string(run) + "/" + std::to_string(plan_.runs) + ": tg " +
        FixedPoint(m.decode_tps, 1) + " t/s, pp " + FixedPoint(m.prefill_tps, 1) + " t/s, TTFT " +
        FixedPoint(m.ttft_ms, 0) + " ms");
  }
  row.ttft_ms = MedianOfKnown(ttft);
  row.prefill_tps = MedianOfKnown(prefill);
  row.decode_tps = MedianOfKnown(decode);
  if (row.runs > 0) row.tps_source = all_from_timings ? "timings" : "stream";
}

void BenchRunner::RunGates(BenchRow& row) {
  for (const Gate& gate : plan_.gates) {
    const nlohmann::json body = {{"model", row.model},
                                 {"messages", {{{"role", "user"}, {"content", gate.prompt}}}},
                                 {"stream", true},
                                 {"temperature", 0},
                                 {"max_tokens", gate.max_tokens}};
    Result<ChatStreamStats> answer = client_.StreamChat(body);
    GateOutcome outcome;
    outcome.gate = gate.name;
    std::string text;
    if (!answer.ok()) {
      outcome.reason = "request failed: " + answer.status().message();
    } else if (!answer.value().error.empty()) {
      outcome.reason = "request failed: " + answer.value().error;
      text = answer.value().text;
    } else {
      text = answer.value().text;
      const GateVerdict verdict = CheckGate(gate, text);
      outcome.passed = verdict.passed;
      outcome.reason = verdict.reason;
    }
    if (!outcome.passed) {
      std::error_code ec;
      std::filesystem::create_directories(plan_.output_dir, ec);
      const std::filesystem::path path =
          std::filesystem::path(plan_.output_dir) /
          (SafeFileName(row.model) + "-" + SafeFileName(gate.name) + ".txt");
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << text;
      if (out.good()) outcome.output_path = path.string();
    }
    Say(row.model + ": gate " + gate.name + ": " +
        (outcome.passed ? "pass" : "FAIL (" + outcome.reason + ")"));
    row.gates.push_back(std::move(outcome));
  }
}

BenchRow BenchRunner::Solo(const std::string& model) {
  BenchRow row;
  row.model = model;
  row.config_hash = ConfigHash(model);
  if (LoadCold(row, /*unload_first=*/true) && CheckQuiet({&row})) {
    guard_->Start();
    MeasureRuns(row);
    MarkNoise(guard_->Stop(), {&row});
    if (row.error.empty()) RunGates(row);
  }
  row.finished_at = UnixNow();
  return row;
}

std::pair<BenchRow, BenchRow> BenchRunner::Duo(const std::string& a, const std::string& b) {
  BenchRow ra, rb;
  ra.model = a, rb.model = b;
  ra.mode = rb.mode = "duo";
  ra.partner = b, rb.partner = a;
  ra.config_hash = ConfigHash(a);
  rb.config_hash = ConfigHash(b);
  auto fail_both = [&](const std::string& error) {
    ra.error = ra.error.empty() ? error : ra.error;
    rb.error = rb.error.empty() ? error : rb.error;
    ra.finished_at = rb.finished_at = UnixNow();
    return std::pair{std::move(ra), std::move(rb)};
  };
  if (!LoadCold(ra, /*unload_first=*/true)) return fail_both("partner " + a + " did not load");
  if (!LoadCold(rb, /*unload_first=*/false)) return fail_both("partner " + b + " did not load");
  Result<std::vector<ModelState>> models = client_.Models();
  const ModelState* first = models.ok() ? FindModelState(models.value(), a) : nullptr;
  if (first == nullptr || first->state != "ready") {
    return fail_both("loading " + b + " stopped " + a +
                     ": they cannot run together (put them in a group with swap: false)");
  }
  if (CheckQuiet({&ra, &rb})) {
    guard_->Start();
    // Both members' runs start together, as a main model and its sub-agent are hit.
    std::latch start(2);
    std::thread other([&] {
      start.arrive_and_wait();
      MeasureRuns(rb);
    });
    start.arrive_and_wait();
    MeasureRuns(ra);
    other.join();
    MarkNoise(guard_->Stop(), {&ra, &rb});
    if (ra.error.empty()) RunGates(ra);
    if (rb.error.empty()) RunGates(rb);
  }
  ra.finished_at = rb.finished_at = UnixNow();
  return {std::move(ra), std::move(rb)};
}

}  // namespace swapd
