// SystemSampler: llama-swap's performance monitor. Every `performance.every` one thread takes a
// sample of the machine (SysStat: per-core CPU use since the previous sample, RAM, swap, load,
// network counters) and of the GPUs the memory meters last read (GpuStat; they read them while a
// model runs), and keeps the last hour of them in a ring for GET /api/performance. It waits on a
// condition variable: a reload that changes `performance` takes effect at once (the ring starts
// over, as in llama-swap), and the destructor stops it at once. Thread safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "config/config.h"
#include "memory/memory_meter.h"
#include "memory/system_stats.h"

namespace swapd {

// The samples GET /api/performance answers with: the machine's, and each GPU's of each sample.
struct PerformanceSamples {
  std::vector<SysStat> sys;
  std::vector<GpuStat> gpus;
};

// The last `capacity` samples, oldest first. Not synchronized.
class SampleRing {
 public:
  explicit SampleRing(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  // One hour of samples taken `every` apart (at least one).
  static size_t CapacityFor(std::chrono::milliseconds every);

  void Push(SysStat sys, std::vector<GpuStat> gpus);
  // The samples taken strictly after `after` (Unix seconds); all of them without it.
  PerformanceSamples After(std::optional<int64_t> after) const;
  size_t size() const { return samples_.size(); }
  size_t capacity() const { return capacity_; }

 private:
  struct Sample {
    SysStat sys;
    std::vector<GpuStat> gpus;
  };
  size_t capacity_;
  std::deque<Sample> samples_;
};

class SystemSampler {
 public:
  // The GPUs as the memory meters last read them (FootprintMonitor::View().gpus). Called on the
  // sampling thread with no lock of the sampler held.
  using GpuSource = std::function<std::map<int, GpuDevice>()>;

  // Starts the sampling thread; it samples only while `settings.disabled` is false.
  SystemSampler(const PerformanceSettings& settings, GpuSource gpus);
  ~SystemSampler();  // stops and joins the thread at once
  SystemSampler(const SystemSampler&) = delete;
  SystemSampler& operator=(const SystemSampler&) = delete;

  // A reload's `performance` (a LiveConfig subscriber). Unchanged settings change nothing;
  // otherwise the ring starts over with the new period, or sampling stops.
  void Configure(const PerformanceSettings& settings);
  // The samples after `after` (see SampleRing::After); nullopt while sampling is disabled.
  std::optional<PerformanceSamples> Samples(std::optional<int64_t> after) const;

 private:
  void Loop();
  // Reads the /proc files and the GPUs; `cpu` holds the previous per-core times and gets the new.
  SysStat TakeSample(std::vector<CpuTimes>& cpu, std::vector<GpuStat>& gpus) const;

  const GpuSource gpu_source_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  // Guarded by mu_:
  PerformanceSettings settings_;
  SampleRing ring_;
  uint64_t generation_ = 0;  // counts the changes of settings_
  bool stop_ = false;

  std::thread thread_;  // last: starts once the rest is made
};

}  // namespace swapd
