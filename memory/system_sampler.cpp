#include "memory/system_sampler.h"

#include <algorithm>
#include <utility>

#include "backends/proc_scan.h"
#include "base/thread_name.h"
#include "base/unix_time.h"

namespace swapd {
namespace {

constexpr std::chrono::milliseconds kHour{3600 * 1000};

std::vector<CpuTimes> ReadCpuTimes() { return ParseProcStat(proc::ReadText("/proc/stat")); }

}  // namespace

size_t SampleRing::CapacityFor(std::chrono::milliseconds every) {
  if (every.count() <= 0) return 1;
  return std::max<size_t>(1, static_cast<size_t>(kHour / every));
}

void SampleRing::Push(SysStat sys, std::vector<GpuStat> gpus) {
  samples_.push_back({std::move(sys), std::move(gpus)});
  while (samples_.size() > capacity_) samples_.pop_front();
}

PerformanceSamples SampleRing::After(std::optional<int64_t> after) const {
  PerformanceSamples out;
  for (const Sample& sample : samples_) {
    if (after && sample.sys.timestamp <= *after) continue;
    out.sys.push_back(sample.sys);
    out.gpus.insert(out.gpus.end(), sample.gpus.begin(), sample.gpus.end());
  }
  return out;
}

SystemSampler::SystemSampler(const PerformanceSettings& settings, GpuSource gpus)
    : gpu_source_(std::move(gpus)),
      settings_(settings),
      ring_(SampleRing::CapacityFor(settings.every)),
      thread_([this] { Loop(); }) {}

SystemSampler::~SystemSampler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void SystemSampler::Configure(const PerformanceSettings& settings) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (settings == settings_) return;
    settings_ = settings;
    ring_ = SampleRing(SampleRing::CapacityFor(settings.every));
    ++generation_;
  }
  wake_.notify_all();
}

std::optional<PerformanceSamples> SystemSampler::Samples(std::optional<int64_t> after) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (settings_.disabled) return std::nullopt;
  return ring_.After(after);
}

SysStat SystemSampler::TakeSample(std::vector<CpuTimes>& cpu, std::vector<GpuStat>& gpus) const {
  SysStat stat;
  stat.timestamp = UnixNow();
  std::vector<CpuTimes> now = ReadCpuTimes();
  stat.cpu_util_per_core = CpuPercents(cpu, now);
  cpu = std::move(now);
  SetMemoryFigures(ParseMemInfo(proc::ReadText("/proc/meminfo")), stat);
  if (auto load = ParseLoadAvg(proc::ReadText("/proc/loadavg"))) stat.load = *load;
  stat.net_io = ParseNetDev(proc::ReadText("/proc/net/dev"));
  gpus = gpu_source_ ? GpuStatsOf(gpu_source_(), stat.timestamp) : std::vector<GpuStat>{};
  return stat;
}

void SystemSampler::Loop() {
  NameThisThread("swapd-perf");
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    const uint64_t generation = generation_;
    if (settings_.disabled) {
      wake_.wait(lock, [&] { return stop_ || generation_ != generation; });
      continue;
    }
    const std::chrono::milliseconds every = settings_.every;
    lock.unlock();
    std::vector<CpuTimes> cpu = ReadCpuTimes();  // the first sample's CPU use is since now
    lock.lock();
    auto next = std::chrono::steady_clock::now() + every;
    const auto changed = [&] { return stop_ || generation_ != generation; };
    while (!wake_.wait_until(lock, next, changed)) {
      lock.unlock();
      std::vector<GpuStat> gpus;
      SysStat stat = TakeSample(cpu, gpus);
      lock.lock();
      if (changed()) break;
      ring_.Push(std::move(stat), std::move(gpus));
      next += every;
      const auto now = std::chrono::steady_clock::now();
      if (next <= now) next = now + every;  // the machine slept: no burst of catch-up samples
    }
  }
}

}  // namespace swapd
