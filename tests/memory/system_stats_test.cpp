// GET /api/performance's samples: the /proc parsers on fixed text, per-core CPU use between two
// readings, the memory figures, the GPUs from the meters' reading, the one-hour ring and its
// `after` filter, and the sampler's switch on and off.
#include <catch2/catch.hpp>

#include "memory/system_sampler.h"
#include "memory/system_stats.h"

namespace swapd {
namespace {

using namespace std::chrono_literals;

TEST_CASE("/proc/stat: per-core times, the all-cores line skipped", "[unit][performance]") {
  const char* before =
      "cpu  100 0 100 800 0 0 0 0 0 0\n"
      "cpu0 10 0 10 80 0 0 0 0 0 0\n"
      "cpu1 50 5 20 20 5 0 0 0 0 0\n"
      "intr 12345 0 0\nctxt 999\nbtime 1700000000\n";
  const char* after =
      "cpu  200 0 200 1600 0 0 0 0 0 0\n"
      "cpu0 60 0 10 130 0 0 0 0 0 0\n"  // 50 busy of 100
      "cpu1 50 5 20 20 5 0 0 0 0 0\n"   // did not move
      "cpu2 1 1 1 1\n";                 // a core only now online
  std::vector<CpuTimes> a = ParseProcStat(before);
  REQUIRE(a.size() == 2);
  CHECK(a[1].busy == 75);    // user + nice + system
  CHECK(a[1].total == 100);  // + idle + iowait
  std::vector<CpuTimes> b = ParseProcStat(after);
  REQUIRE(b.size() == 3);
  CHECK(CpuPercents(a, b) == std::vector<double>{50.0, 0.0, 0.0});
  // irq, softirq and steal are busy; iowait is idle.
  std::vector<CpuTimes> c = ParseProcStat("cpu0 0 0 0 0 0 0 0 0\n");
  std::vector<CpuTimes> d = ParseProcStat("cpu0 0 0 0 30 30 10 10 20\n");
  CHECK(CpuPercents(c, d) == std::vector<double>{40.0});
  CHECK(ParseProcStat("").empty());
}

TEST_CASE("/proc/loadavg and /proc/net/dev", "[unit][performance]") {
  auto load = ParseLoadAvg("0.52 1.58 2.05 1/467 12345\n");
  REQUIRE(load);
  CHECK(load->one == Approx(0.52));
  CHECK(load->five == Approx(1.58));
  CHECK(load->fifteen == Approx(2.05));
  CHECK_FALSE(ParseLoadAvg("garbage"));

  const char* dev =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
      "drop fifo colls carrier compressed\n"
      "    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0\n"
      "  eth0:12345678 100 0 0 0 0 0 0 87654321 90 0 0 0 0 0 0\n"
      "wlan0: 5 1 0 0 0 0 0 0 7 1 0 0 0 0 0 0\n"
      "bad0: 1 2 3\n";
  CHECK(ParseNetDev(dev) == std::vector<NetIo>{{"eth0", 12345678, 87654321}, {"wlan0", 5, 7}});
}

TEST_CASE("/proc/meminfo: RAM and swap in MiB", "[unit][performance]") {
  RamInfo ram = ParseMemInfo(
      "MemTotal:       16384000 kB\nMemFree:         1024000 kB\nMemAvailable:    8192000 kB\n"
      "Buffers: 1 kB\nSwapTotal:       2048000 kB\nSwapFree:        1024000 kB\n");
  CHECK(ram.free == 1024000ull * 1024);
  CHECK(ram.swap_total == 2048000ull * 1024);
  CHECK(ram.swap_free == 1024000ull * 1024);
  SysStat stat;
  SetMemoryFigures(ram, stat);
  CHECK(stat.mem_total_mb == 16000);
  CHECK(stat.mem_used_mb == 8000);  // MemTotal - MemAvailable
  CHECK(stat.mem_free_mb == 1000);
  CHECK(stat.swap_total_mb == 2000);
  CHECK(stat.swap_used_mb == 1000);
}

TEST_CASE("GPU samples from the memory meters' reading", "[unit][performance]") {
  std::map<int, GpuDevice> gpus;
  gpus[0] = {"GPU-aaa", 4096ll << 20, 1024ll << 20};
  gpus[1] = {"GPU-bbb", kUnknownBytes, kUnknownBytes};
  std::vector<GpuStat> stats = GpuStatsOf(gpus, 1700000000);
  REQUIRE(stats.size() == 2);
  CHECK(stats[0].id == 0);
  CHECK(stats[0].uuid == "GPU-aaa");
  CHECK(stats[0].mem_total_mb == 4096);
  CHECK(stats[0].mem_used_mb == 1024);
  CHECK(stats[0].mem_util_pct == Approx(25.0));
  CHECK(stats[0].timestamp == 1700000000);
  CHECK(stats[1].mem_total_mb == 0);
  CHECK(stats[1].mem_util_pct == 0);
  CHECK(GpuStatsOf({}, 1).empty());
}

SysStat SysStatAt(int64_t t) {
  SysStat s;
  s.timestamp = t;
  return s;
}

TEST_CASE("the ring keeps one hour; after= keeps what is strictly later", "[unit][performance]") {
  CHECK(SampleRing::CapacityFor(5s) == 720);
  CHECK(SampleRing::CapacityFor(1min) == 60);
  CHECK(SampleRing::CapacityFor(2h) == 1);
  SampleRing ring(3);
  for (int64_t t = 100; t <= 140; t += 10) {
    GpuStat gpu;
    gpu.timestamp = t;
    ring.Push(SysStatAt(t), {gpu, gpu});
  }
  CHECK(ring.size() == 3);
  PerformanceSamples all = ring.After(std::nullopt);
  REQUIRE(all.sys.size() == 3);
  CHECK(all.sys.front().timestamp == 120);
  CHECK(all.gpus.size() == 6);
  PerformanceSamples later = ring.After(130);
  REQUIRE(later.sys.size() == 1);
  CHECK(later.sys[0].timestamp == 140);
  CHECK(later.gpus.size() == 2);
  CHECK(ring.After(140).sys.empty());
}

TEST_CASE("the sampler answers nothing while disabled and stops at once", "[unit][performance]") {
  PerformanceSettings off;
  off.disabled = true;
  SystemSampler sampler(off, nullptr);
  CHECK_FALSE(sampler.Samples(std::nullopt));
  sampler.Configure(PerformanceSettings{});
  auto on = sampler.Samples(std::nullopt);
  REQUIRE(on);
  CHECK(on->sys.empty());  // the first sample comes `every` later
  const auto start = std::chrono::steady_clock::now();
  sampler.Configure(off);
  CHECK_FALSE(sampler.Samples(std::nullopt));
  CHECK(std::chrono::steady_clock::now() - start < 1s);
}

}  // namespace
}  // namespace swapd
