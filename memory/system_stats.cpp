#include "memory/system_stats.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "base/text.h"

namespace swapd {
namespace {

constexpr uint64_t kBytesPerMiB = 1024 * 1024;

int64_t WholeMiB(uint64_t bytes) { return static_cast<int64_t>(bytes / kBytesPerMiB); }

}  // namespace

std::vector<CpuTimes> ParseProcStat(std::string_view text) {
  std::vector<CpuTimes> cores;
  ForEachLine(text, [&cores](std::string_view line) {
    if (line.size() < 4 || !line.starts_with("cpu") ||
        !std::isdigit(static_cast<unsigned char>(line[3]))) {
      return;
    }
    std::istringstream in{std::string(line)};
    std::string name;
    // user nice system idle iowait irq softirq steal; guest time is already in user and nice.
    uint64_t field[8] = {};
    in >> name;
    int read = 0;
    while (read < 8 && in >> field[read]) ++read;
    if (read < 4) return;
    CpuTimes core;
    core.busy = field[0] + field[1] + field[2] + field[5] + field[6] + field[7];
    core.total = core.busy + field[3] + field[4];
    cores.push_back(core);
  });
  return cores;
}

std::vector<double> CpuPercents(const std::vector<CpuTimes>& before,
                                const std::vector<CpuTimes>& after) {
  std::vector<double> percents(after.size(), 0.0);
  for (size_t i = 0; i < after.size() && i < before.size(); ++i) {
    if (after[i].total <= before[i].total || after[i].busy < before[i].busy) continue;
    const double busy = static_cast<double>(after[i].busy - before[i].busy);
    const double total = static_cast<double>(after[i].total - before[i].total);
    percents[i] = std::clamp(busy / total * 100.0, 0.0, 100.0);
  }
  return percents;
}

std::optional<LoadAverage> ParseLoadAvg(std::string_view text) {
  std::istringstream in{std::string(text)};
  LoadAverage load;
  if (!(in >> load.one >> load.five >> load.fifteen)) return std::nullopt;
  return load;
}

std::vector<NetIo> ParseNetDev(std::string_view text) {
  std::vector<NetIo> interfaces;
  ForEachLine(text, [&interfaces](std::string_view line) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    NetIo io;
    io.name = std::string(TrimSpace(line.substr(0, colon)));
    if (io.name.empty() || io.name.find('|') != std::string::npos || io.name == "lo") return;
    // Received: bytes packets errs drop fifo frame compressed multicast; then sent: bytes ...
    std::istringstream in{std::string(line.substr(colon + 1))};
    uint64_t field[9] = {};
    for (uint64_t& f : field) {
      if (!(in >> f)) return;
    }
    io.bytes_recv = field[0];
    io.bytes_sent = field[8];
    interfaces.push_back(std::move(io));
  });
  return interfaces;
}

void SetMemoryFigures(const RamInfo& ram, SysStat& stat) {
  stat.mem_total_mb = WholeMiB(ram.total);
  stat.mem_used_mb = WholeMiB(ram.total > ram.available ? ram.total - ram.available : 0);
  stat.mem_free_mb = WholeMiB(ram.free);
  stat.swap_total_mb = WholeMiB(ram.swap_total);
  stat.swap_used_mb = WholeMiB(ram.swap_total > ram.swap_free ? ram.swap_total - ram.swap_free : 0);
}

std::vector<GpuStat> GpuStatsOf(const std::map<int, GpuDevice>& gpus, int64_t timestamp) {
  std::vector<GpuStat> stats;
  for (const auto& [index, gpu] : gpus) {
    GpuStat stat;
    stat.timestamp = timestamp;
    stat.id = index;
    stat.uuid = gpu.uuid;
    stat.mem_total_mb = gpu.total_bytes > 0 ? WholeMiB(static_cast<uint64_t>(gpu.total_bytes)) : 0;
    stat.mem_used_mb = gpu.used_bytes > 0 ? WholeMiB(static_cast<uint64_t>(gpu.used_bytes)) : 0;
    if (stat.mem_total_mb > 0) {
      stat.mem_util_pct =
          static_cast<double>(stat.mem_used_mb) / static_cast<double>(stat.mem_total_mb) * 100.0;
    }
    stats.push_back(std::move(stat));
  }
  return stats;
}

}  // namespace swapd
