#include "memory/footprint_monitor.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "base/prometheus_text.h"
#include "base/thread_name.h"
#include "config/memory.h"
#include "memory/process_memory.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

// The closest two samples may be when asked for one soon.
constexpr auto kMinSpacing = std::chrono::seconds(1);
// How often a model's files are looked at again (page-cache residency costs about 3 ms of CPU per
// GiB of files; their size comes with it). Sooner when the files named change.
constexpr auto kFilesEvery = std::chrono::seconds(30);
// How often the GPU tool runs while the same backends run (nvidia-smi takes tens of milliseconds
// of CPU); at once when a backend is new since its last run.
constexpr auto kGpuEvery = std::chrono::seconds(10);
// A running model's footprint is recorded when it changes, and at least this often.
constexpr auto kRecordEvery = std::chrono::seconds(60);

// Whether a footprint moved enough to be recorded again: by more than 16 MiB and 2% anywhere.
bool Moved(const Footprint& before, const Footprint& now) {
  auto moved = [](uint64_t a, uint64_t b) {
    const uint64_t d = a > b ? a - b : b - a;
    return d > (uint64_t{16} << 20) && d * 50 > std::max(a, b);
  };
  if (moved(before.ram, now.ram)) return true;
  for (const auto& [gpu, bytes] : now.vram) {
    auto it = before.vram.find(gpu);
    if (moved(it == before.vram.end() ? 0 : it->second, bytes)) return true;
  }
  return false;
}

// What the budget counts for a running model, from one sample.
Footprint FootprintFrom(const ModelMemory& m, bool keep_page_cache) {
  Footprint f;
  f.ram = static_cast<uint64_t>(keep_page_cache ? m.process.anon + m.process.shmem + m.cache.bytes
                                                : m.process.rss);
  for (const auto& [gpu, bytes] : m.vram) {
    if (bytes > 0) f.vram[gpu] = static_cast<uint64_t>(bytes);
  }
  return f;
}

}  // namespace

FootprintMonitor::FootprintMonitor(Router& router, const LiveConfig& live,
                                   std::unique_ptr<HistoryStore> store)
    : router_(router), live_(live), store_(std::move(store)) {
  view_.interval = live_.Current()->memory.sample_interval;
  if (store_) view_.store_path = store_->path();
  thread_ = std::thread([this] { Loop(); });
}

FootprintMonitor::~FootprintMonitor() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void FootprintMonitor::ConfigChanged(const Config& next) {
  {
    std::lock_guard lock(mu_);
    view_.interval = next.memory.sample_interval;
  }
  wake_.notify_all();
}

void FootprintMonitor::SampleSoon() {
  // A sample is due already: it starts after this (the thread clears the flag before it samples).
  if (soon_.load(std::memory_order_relaxed)) return;
  {
    std::lock_guard lock(mu_);
    if (soon_) return;
    soon_ = true;
  }
  wake_.notify_all();
}

MemoryView FootprintMonitor::View() const {
  std::lock_guard lock(mu_);
  return view_;
}

void FootprintMonitor::Loop() {
  NameThisThread("swapd-footprint");
  std::unique_lock lock(mu_);
  Clock::time_point last = Clock::time_point::min();
  while (!stop_) {
    const auto interval = view_.interval;
    if (interval.count() <= 0) {
      wake_.wait(lock, [this] { return stop_ || view_.interval.count() > 0; });
      continue;
    }
    // Wait for the interval, or for a request of a sample soon (no closer than kMinSpacing).
    wake_.wait_until(lock, last == Clock::time_point::min() ? Clock::now() : last + interval,
                     [&] { return stop_ || view_.interval != interval || soon_; });
    if (stop_) break;
    if (view_.interval != interval) continue;
    if (soon_ && Clock::now() < last + kMinSpacing) {
      wake_.wait_until(lock, last + kMinSpacing, [this] { return stop_; });
      if (stop_) break;
    }
    soon_ = false;
    last = Clock::now();
    lock.unlock();
    Sample();
    lock.lock();
  }
}

void FootprintMonitor::Sample() {
  const std::shared_ptr<const Config> config = live_.Current();
  std::map<std::string, ModelMemory> previous;
  {
    std::lock_guard lock(mu_);
    previous = view_.models;
  }
  if (store_ && !history_read_) {
    history_read_ = true;
    auto latest = store_->LatestFootprints();
    if (latest.ok()) {
      history_ = std::move(latest).value();
    } else {
      spdlog::warn("{}; the footprints measured before are not used", latest.status().message());
    }
  }
  std::vector<ModelSnapshot> snapshot = router_.Snapshot();
  std::vector<int> groups;
  for (const ModelSnapshot& s : snapshot) {
    if (s.backend.state == BackendState::kReady && s.backend.pid > 0) {
      groups.push_back(s.backend.pid);
    }
  }
  const bool any_running = !groups.empty();
  // Every process of each run: its process group and whatever left the group but not its run
  // (a server a wrapper started in a new session).
  std::map<int, std::vector<int>> members = ProcessGroupsPids(groups);
  for (const ModelSnapshot& s : snapshot) {
    if (s.backend.state != BackendState::kReady || s.backend.pid <= 0 || !s.backend.scope) continue;
    std::vector<int>& pids = members[s.backend.pid];
    for (int pid : ScopePids(*s.backend.scope)) pids.push_back(pid);
    std::sort(pids.begin(), pids.end());
    pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  }
  bool new_run = false;  // a backend became ready since the last sample
  for (const ModelSnapshot& s : snapshot) {
    auto it = previous.find(s.id);
    if (s.backend.state == BackendState::kReady && s.backend.pid > 0 &&
        (it == previous.end() || it->second.pid != s.backend.pid)) {
      new_run = true;
    }
  }
  const bool read_gpu = any_running && (new_run || Clock::now() >= gpu_read_ + kGpuEvery);
  GpuReading gpu = read_gpu ? ReadGpus() : GpuReading{};
  if (read_gpu) gpu_read_ = Clock::now();
  std::map<std::string, ModelMemory> models;
  const auto now = std::chrono::system_clock::now();
  for (const ModelSnapshot& s : snapshot) {
    auto definition = config->models.find(s.id);
    if (definition == config->models.end()) continue;  // removed by a reload, still stopping
    ModelMemory m;
    if (auto it = previous.find(s.id); it != previous.end()) m = it->second;
    if (m.definition != definition->second.slot_key || m.definition.empty()) {
      // First seen, or its definition changed: what the history knows of this definition.
      m = ModelMemory{};
      m.definition = definition->second.slot_key;
      if (auto h = history_.find({s.id, m.definition}); h != history_.end()) {
        m.learned = h->second;
        m.recorded = h->second;
        m.from_history = true;
        router_.SetFootprint(s.id, m.learned);
      }
    }
    std::vector<std::string> files = ModelFilesOf(definition->second.argv);
    const auto steady_now = Clock::now();
    if (files != m.files || steady_now >= m.files_checked + kFilesEvery) {
      m.files = std::move(files);
      m.cache = FilesInPageCache(m.files);
      m.files_checked = steady_now;
    }
    auto pids = members.find(s.backend.pid);
    m.running = s.backend.state == BackendState::kReady && pids != members.end();
    if (m.running) {
      const bool same_run = m.measured && m.pid == s.backend.pid;
      m.pid = s.backend.pid;
      m.process = ProcessMemoryOf(pids->second);
      if (read_gpu || !same_run) {
        m.vram = gpu.available ? GpuMemoryOfPids(gpu, pids->second) : std::map<int, int64_t>{};
      }
      const Footprint now_needs = FootprintFrom(m, definition->second.keep_page_cache);
      // The largest seen during this run: a KV cache grows as its context fills.
      m.learned = same_run ? Larger(m.learned, now_needs) : now_needs;
      m.measured = true;
      m.from_history = false;
      m.measured_at = now;
      if (m.process.rss > 0) router_.SetFootprint(s.id, m.learned);
    }
    models[s.id] = std::move(m);
  }
  if (store_) RecordHistory(models);
  std::lock_guard lock(mu_);
  view_.models = std::move(models);
  if (read_gpu) {
    view_.gpu_tool = gpu.tool;
    view_.gpu_error = gpu.error;
    view_.gpus = gpu.devices;
  }
  ++view_.samples;
}

void FootprintMonitor::RecordHistory(std::map<std::string, ModelMemory>& models) {
  const auto now = Clock::now();
  Status failed;
  for (auto& [id, m] : models) {
    if (!m.running) continue;
    if (!Moved(m.recorded, m.learned) && now < m.recorded_at + kRecordEvery) continue;
    FootprintRecord r;
    r.model = id;
    r.definition = m.definition;
    r.at =
        std::chrono::duration_cast<std::chrono::seconds>(m.measured_at.time_since_epoch()).count();
    r.process = m.process;
    r.vram = m.vram;
    r.learned = m.learned;
    if (Status s = store_->Record(r); !s.ok()) {
      failed = s;
      break;  // the disk is full or the file broken: try again next sample
    }
    m.recorded = m.learned;
    m.recorded_at = now;
  }
  std::string error = failed.ok() ? "" : failed.message();
  std::lock_guard lock(mu_);
  if (!error.empty() && view_.store_error.empty()) {
    spdlog::warn("{}; footprints are not recorded until it works again", error);
  } else if (error.empty() && !view_.store_error.empty()) {
    spdlog::info("store {}: recording footprints again", store_->path());
  }
  view_.store_error = std::move(error);
}

std::string FootprintMonitor::RenderPrometheus(const std::vector<ModelSnapshot>& models) const {
  const MemoryView view = View();
  const MemoryAmount budget = router_.Budget();
  std::ostringstream out;
  PrometheusHeader(out, "swapd_memory_budget_bytes", "gauge",
                   "The memory budgets in force (memory.ram, memory.gpus).");
  if (budget.ram) out << "swapd_memory_budget_bytes{resource=\"ram\"} " << *budget.ram << "\n";
  for (const auto& [gpu, bytes] : budget.vram) {
    out << "swapd_memory_budget_bytes{resource=\"gpu" << gpu << "\"} " << bytes << "\n";
  }
  PrometheusHeader(
      out, "swapd_model_memory_cost_bytes", "gauge",
      "What the memory budget counts for each model: the larger of declared and learned.");
  for (const ModelSnapshot& m : models) {
    out << "swapd_model_memory_cost_bytes{model=\"" << PrometheusLabel(m.id)
        << "\",resource=\"ram\"} " << m.cost.ram << "\n";
    for (const auto& [gpu, bytes] : m.cost.vram) {
      out << "swapd_model_memory_cost_bytes{model=\"" << PrometheusLabel(m.id)
          << "\",resource=\"gpu" << gpu << "\"} " << bytes << "\n";
    }
  }
  PrometheusHeader(
      out, "swapd_backend_gpu_memory_bytes", "gauge",
      "GPU memory of each running backend's process group, by GPU index (nvidia-smi or "
      "rocm-smi).");
  for (const auto& [id, m] : view.models) {
    if (m.pid == 0) continue;
    for (const auto& [gpu, bytes] : m.vram) {
      if (bytes >= 0) {
        out << "swapd_backend_gpu_memory_bytes{model=\"" << PrometheusLabel(id) << "\",gpu=\""
            << gpu << "\"} " << bytes << "\n";
      }
    }
  }
  PrometheusHeader(out, "swapd_model_file_bytes", "gauge",
                   "Size of each model's files (GGUF) on disk.");
  for (const auto& [id, m] : view.models) {
    if (!m.files.empty()) {
      out << "swapd_model_file_bytes{model=\"" << PrometheusLabel(id) << "\"} " << m.cache.bytes
          << "\n";
    }
  }
  PrometheusHeader(out, "swapd_model_file_cached_bytes", "gauge",
                   "How much of each model's files is in the page cache (mincore).");
  for (const auto& [id, m] : view.models) {
    if (!m.files.empty()) {
      out << "swapd_model_file_cached_bytes{model=\"" << PrometheusLabel(id) << "\"} "
          << m.cache.cached << "\n";
    }
  }
  PrometheusHeader(out, "swapd_memory_samples_total", "counter", "Memory samples taken.");
  out << "swapd_memory_samples_total " << view.samples << "\n";
  PrometheusHeader(
      out, "swapd_gpu_tool_up", "gauge",
      "1 when the GPU tool (nvidia-smi or rocm-smi) answered the last sample, 0 when it failed "
      "or is "
      "absent.");
  out << "swapd_gpu_tool_up " << (view.gpu_error.empty() && !view.gpu_tool.empty() ? 1 : 0) << "\n";
  return out.str();
}

Result<std::vector<FootprintRecord>> FootprintMonitor::History(const std::string& model,
                                                               int limit) const {
  if (!store_) {
    return Status::Error(ErrorCode::kUnavailable,
                         "no history store: store.path is none, or it could not be opened");
  }
  return store_->History(model, limit);
}

MachineMemory ReadMachineMemory() {
  MachineMemory machine;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  while (meminfo >> key >> kb) {
    if (key == "MemTotal:") {
      machine.ram = kb * 1024;
      break;
    }
    meminfo.ignore(256, '\n');
  }
  const GpuReading gpu = ReadGpus();
  for (const auto& [index, device] : gpu.devices) {
    if (device.total_bytes > 0) machine.gpus[index] = static_cast<uint64_t>(device.total_bytes);
  }
  if (machine.gpus.empty()) {
    machine.gpu_note = !gpu.error.empty() ? gpu.error
                       : gpu.tool.empty() ? "neither nvidia-smi nor rocm-smi is on PATH"
                                          : gpu.tool + " lists no GPU";
  }
  return machine;
}

}  // namespace swapd
