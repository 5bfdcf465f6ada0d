// The quiet-machine guard (scoreboard/quiet_guard.h) on a fake /proc whose counters change by
// known amounts between its two samples (the excluded-roots callback, called at the start of
// each sample, turns the tree into its second state), and once on the real /proc.
#include "scoreboard/quiet_guard.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>

#include "tests/support/temp_dir.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;

constexpr auto kWindow = 200ms;

// The counters of one state of the fake tree.
struct FakeState {
  uint64_t busy = 0;  // jiffies, spread over the busy fields of the cpu line
  std::map<int, std::pair<int, uint64_t>> processes;  // pid -> (ppid, utime + stime)
  uint64_t sda_sectors = 0;                           // read + written of the whole disk
  uint64_t pgpgin_kib = 0;
  uint64_t pgsteal_pages = 0;
};

class FakeProc {
 public:
  void Write(const FakeState& s) {
    const uint64_t user = s.busy / 2;
    tmp_.Write("stat", "cpu  " + std::to_string(user) + " 0 " + std::to_string(s.busy - user) +
                           " 99999 50 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 1 2 3\n");
    for (const auto& entry : std::filesystem::directory_iterator(tmp_.Path())) {
      if (entry.is_directory()) std::filesystem::remove_all(entry.path());
    }
    for (const auto& [pid, p] : s.processes) {
      // A command name with spaces and parentheses, as a process may set it.
      const uint64_t utime = p.second / 3;
      tmp_.Write(std::to_string(pid) + "/stat",
                 std::to_string(pid) + " (my (odd) name) S " + std::to_string(p.first) +
                     " 1 1 0 -1 4194560 100 0 0 0 " + std::to_string(utime) + " " +
                     std::to_string(p.second - utime) + " 7 7 20 0 1 0 100 1000 10\n");
    }
    tmp_.Write("self/stat", "not a process directory\n");
    // sda1 and nvme0n1p1 are partitions (their I/O is already in their disk's), loop0 is not a
    // disk; none of them may count.
    tmp_.Write("diskstats", "   8       0 sda 10 0 " + std::to_string(s.sda_sectors / 2) +
                                " 5 10 0 " + std::to_string(s.sda_sectors - s.sda_sectors / 2) +
                                " 5 0 10 10\n" + "   8       1 sda1 10 0 " +
                                std::to_string(s.sda_sectors) + " 5 10 0 " +
                                std::to_string(s.sda_sectors) + " 5 0 10 10\n" +
                                " 259       0 nvme0n1 1 0 100 1 1 0 100 1 0 1 1\n" +
                                " 259       1 nvme0n1p1 1 0 " + std::to_string(s.sda_sectors) +
                                " 1 1 0 100 1 0 1 1\n" + "   7       0 loop0 1 0 " +
                                std::to_string(s.sda_sectors * 3) + " 1 1 0 0 0 0 1 1\n");
    tmp_.Write("vmstat", "nr_free_pages 1000\npgpgin " + std::to_string(s.pgpgin_kib) +
                             "\npgpgout 5\npgsteal_kswapd " + std::to_string(s.pgsteal_pages) +
                             "\npgsteal_direct 0\npgsteal_anon " +
                             std::to_string(s.pgsteal_pages * 7) + "\n");
  }
  std::string root() const { return tmp_.Path(); }

 private:
  TempDir tmp_{"swapd-proc"};
};

double Ticks() { return static_cast<double>(sysconf(_SC_CLK_TCK)); }
double Seconds() { return std::chrono::duration<double>(kWindow).count(); }
double PageBytes() { return static_cast<double>(sysconf(_SC_PAGESIZE)); }

// Runs a Check over the fake tree going from `first` to `second`; `roots` are the excluded ones.
NoiseReport CheckBetween(FakeProc& proc, const FakeState& first, const FakeState& second,
                         std::vector<int> roots, NoiseLimits limits = NoiseLimits()) {
  proc.Write(first);
  int samples = 0;
  QuietGuard guard(
      limits,
      [&] {
        if (++samples == 2) proc.Write(second);
        return roots;
      },
      proc.root());
  NoiseReport report = guard.Check(kWindow);
  CHECK(samples == 2);
  return report;
}

// `value` is what `delta` per kWindow makes, give or take the time a sample takes.
void CheckRate(double value, double per_window) {
  INFO(value << " vs " << per_window);
  CHECK(value <= per_window * 1.0001);
  CHECK(value >= per_window * 0.5);
}

TEST_CASE("the quiet guard measures other CPU, disk and page-cache churn", "[unit][scoreboard]") {
  FakeProc proc;
  FakeState a;
  a.busy = 10000;
  // 100 (bench swapd) -> 101 (backend) -> 102 (its helper); 200 is someone else's build.
  a.processes = {
      {1, {0, 50}}, {100, {1, 1000}}, {101, {100, 5000}}, {102, {101, 10}}, {200, {1, 300}}};
  a.sda_sectors = 1000;
  a.pgpgin_kib = 4000;
  a.pgsteal_pages = 10;
  FakeState b = a;
  const uint64_t other = static_cast<uint64_t>(Ticks());  // one CPU-second of someone else's
  b.busy += 60 + 30 + 5 + other;
  b.processes[100].second += 60;
  b.processes[101].second += 30;
  b.processes[102].second += 5;
  b.processes[200].second += other;
  b.sda_sectors += 40000;  // 20.48 MB
  b.pgpgin_kib += 10000;
  b.pgsteal_pages += 1000;

  const NoiseReport report = CheckBetween(proc, a, b, {100});
  CheckRate(report.other_cpu_cores, 1.0 / Seconds());
  CheckRate(report.disk_mb_per_s, 40000 * 512 / 1e6 / Seconds());
  CheckRate(report.page_cache_mb_per_s, (10000 * 1024 + 1000 * PageBytes()) / 1e6 / Seconds());
  CHECK(report.noisy);
  INFO(report.reason);
  CHECK(report.reason.starts_with("other processes used "));
  CHECK(report.reason.find(" cores (limit 0.5); disk ") != std::string::npos);
  CHECK(report.reason.find(" MB/s (limit 20); page-cache churn ") != std::string::npos);
  CHECK(report.reason.ends_with(" MB/s (limit 50)"));
}

TEST_CASE("the quiet guard finds a quiet machine quiet", "[unit][scoreboard]") {
  FakeProc proc;
  FakeState a;
  a.busy = 500;
  a.processes = {{100, {1, 1000}}, {101, {100, 5000}}, {300, {1, 7}}};
  FakeState b = a;
  b.busy += 400;  // all of it the backend's
  b.processes[101].second += 400;
  b.sda_sectors += 8;
  const NoiseReport report = CheckBetween(proc, a, b, {100});
  CHECK_FALSE(report.noisy);
  CHECK(report.reason.empty());
  CHECK(report.other_cpu_cores == 0);
  CHECK(report.disk_mb_per_s > 0);
  CHECK(report.disk_mb_per_s < 1);
  CHECK(report.page_cache_mb_per_s == 0);

  // The bench's own process is excluded without being named.
  FakeState c = a;
  c.processes[getpid()] = {1, 100};
  FakeState d = c;
  d.busy += 5 * static_cast<uint64_t>(Ticks());
  d.processes[getpid()].second += 5 * static_cast<uint64_t>(Ticks());
  CHECK(CheckBetween(proc, c, d, {}).other_cpu_cores == 0);
}

TEST_CASE("processes that come and go between samples do not make the numbers absurd",
          "[unit][scoreboard]") {
  FakeProc proc;
  FakeState a;
  a.busy = 100000;
  a.processes = {{100, {1, 1000}}, {101, {100, 90000}}, {400, {1, 20}}};
  a.sda_sectors = 5000;
  a.pgpgin_kib = 100;
  FakeState b = a;
  b.processes.erase(101);        // the backend ended: its 90000 jiffies are gone from the tree
  b.processes[102] = {100, 20};  // a new one started during the window
  b.busy += 20;
  // Counters that went backwards (a disk replaced, a counter reset) count as no change.
  b.sda_sectors = 10;
  b.pgpgin_kib = 0;
  const NoiseReport report = CheckBetween(proc, a, b, {100});
  CHECK(report.other_cpu_cores == 0);
  CHECK(report.disk_mb_per_s == 0);
  CHECK(report.page_cache_mb_per_s == 0);
  CHECK_FALSE(report.noisy);

  // The busy counter going backwards as well.
  FakeState c = a;
  c.busy = 10;
  CHECK(CheckBetween(proc, a, c, {100}).other_cpu_cores == 0);
}

TEST_CASE("the quiet guard's limits are the caller's", "[unit][scoreboard]") {
  FakeProc proc;
  FakeState a;
  a.busy = 100;
  FakeState b = a;
  b.busy += static_cast<uint64_t>(Ticks()) / 10;  // ~0.5 cores over the window
  NoiseLimits strict;
  strict.other_cpu_cores = 0.01;
  const NoiseReport report = CheckBetween(proc, a, b, {}, strict);
  CHECK(report.noisy);
  CHECK(report.reason.find("(limit 0.01)") != std::string::npos);
  CHECK(report.reason.find("disk") == std::string::npos);
}

TEST_CASE("the quiet guard samples a span on its own thread", "[unit][scoreboard]") {
  FakeProc proc;
  FakeState a;
  a.busy = 100;
  proc.Write(a);
  QuietGuard guard(
      NoiseLimits(), [] { return std::vector<int>(); }, proc.root());
  CHECK_FALSE(guard.Stop().noisy);  // not started
  guard.Start(10ms);
  FakeState b = a;
  b.busy += 100 * static_cast<uint64_t>(Ticks());  // a burst: 100 CPU-seconds at once
  proc.Write(b);
  const NoiseReport report = guard.Stop();
  CHECK(report.noisy);
  CHECK(report.other_cpu_cores > 1);
  // Started again, a quiet span forgets the burst.
  guard.Start(10ms);
  const NoiseReport quiet = guard.Stop();
  CHECK_FALSE(quiet.noisy);
  CHECK(quiet.other_cpu_cores == 0);
}

TEST_CASE("the quiet guard reads the real /proc", "[unit][scoreboard]") {
  QuietGuard guard(NoiseLimits(), [] { return std::vector<int>{1}; });
  const NoiseReport report = guard.Check(50ms);
  CHECK(report.other_cpu_cores >= 0);
  CHECK(report.other_cpu_cores < 4096);
  CHECK(report.disk_mb_per_s >= 0);
  CHECK(report.page_cache_mb_per_s >= 0);
  CHECK(report.noisy == !report.reason.empty());
}

}  // namespace
}  // namespace swapd::testing
