// What GET /api/performance reports of the machine, in llama-swap's terms (its perf.SysStat and
// perf.GpuStat), and the pure parsers of the /proc files it comes from: per-core CPU times
// (/proc/stat), the load averages (/proc/loadavg) and each network interface's byte counters
// (/proc/net/dev). RAM and swap come from /proc/meminfo (machine_info.h's ParseMemInfo). Pure;
// thread safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memory/machine_info.h"
#include "memory/memory_meter.h"

namespace swapd {

// One core's jiffies since boot: busy (user, nice, system, irq, softirq, steal) and all of it
// (busy plus idle and iowait), as gopsutil counts them.
struct CpuTimes {
  uint64_t busy = 0;
  uint64_t total = 0;
};

// The "cpuN" lines of /proc/stat, in order (the "cpu" line of all cores together is skipped).
std::vector<CpuTimes> ParseProcStat(std::string_view text);

// Each core's busy share, 0..100, between two readings of ParseProcStat. A core not in `before`,
// or whose counters did not move, is 0.
std::vector<double> CpuPercents(const std::vector<CpuTimes>& before,
                                const std::vector<CpuTimes>& after);

struct LoadAverage {
  double one = 0;
  double five = 0;
  double fifteen = 0;
};
// nullopt when the text does not start with three numbers.
std::optional<LoadAverage> ParseLoadAvg(std::string_view text);

// An interface's cumulative byte counters since boot (as gopsutil's IOCounters reports them).
struct NetIo {
  std::string name;
  uint64_t bytes_recv = 0;
  uint64_t bytes_sent = 0;

  bool operator==(const NetIo&) const = default;
};
// The interfaces of /proc/net/dev in file order, without the loopback "lo" (as llama-swap).
std::vector<NetIo> ParseNetDev(std::string_view text);

// One sample of the machine (llama-swap's SysStat).
struct SysStat {
  int64_t timestamp = 0;  // Unix seconds
  std::vector<double> cpu_util_per_core;
  int64_t mem_total_mb = 0;  // MemTotal
  int64_t mem_used_mb = 0;   // MemTotal - MemAvailable
  int64_t mem_free_mb = 0;   // MemFree
  int64_t swap_total_mb = 0;
  int64_t swap_used_mb = 0;  // SwapTotal - SwapFree
  LoadAverage load;
  std::vector<NetIo> net_io;
};

// The memory figures of `ram` in MiB (rounded down), as SysStat holds them.
void SetMemoryFigures(const RamInfo& ram, SysStat& stat);

// One GPU in one sample (llama-swap's GpuStat). swapd's memory meters read the index, the UUID and
// the memory; the rest (name, temperatures, utilization, fan, power) is not read: "" and 0.
struct GpuStat {
  int64_t timestamp = 0;  // Unix seconds, the sample's
  int id = 0;             // the GPU's index
  std::string name;
  std::string uuid;
  int temp_c = 0;
  int vram_temp_c = 0;
  double gpu_util_pct = 0;
  double mem_util_pct = 0;  // mem_used_mb / mem_total_mb * 100
  int64_t mem_used_mb = 0;
  int64_t mem_total_mb = 0;
  double fan_speed_pct = 0;
  double power_draw_w = 0;
};

// The GPUs the meters last read (GpuReading::devices, MemoryView::gpus), as of `timestamp`.
// Unknown figures (kUnknownBytes) are 0.
std::vector<GpuStat> GpuStatsOf(const std::map<int, GpuDevice>& gpus, int64_t timestamp);

}  // namespace swapd
