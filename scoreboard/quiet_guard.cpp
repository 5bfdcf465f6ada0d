#include "scoreboard/quiet_guard.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

// What one look at /proc saw. Counters only; rates come from two samples.
struct Sample {
  Clock::time_point at;
  bool valid = false;                     // <proc_root>/stat was read
  uint64_t busy_jiffies = 0;              // all CPUs, not idle or iowait
  std::map<int, uint64_t> excluded;       // pid -> utime + stime, the excluded trees only
  std::map<std::string, uint64_t> disks;  // whole disk -> sectors read + written
  uint64_t churn_bytes = 0;               // pages read in + pages reclaimed, in bytes
};

struct Rates {
  double other_cpu_cores = 0;
  double disk_mb_per_s = 0;
  double page_cache_mb_per_s = 0;
};

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(std::move(w));
  return words;
}

uint64_t Number(std::string_view s) {
  uint64_t n = 0;
  std::from_chars(s.data(), s.data() + s.size(), n);
  return n;
}

bool ReadBusy(const std::string& proc_root, uint64_t& busy) {
  std::ifstream in(proc_root + "/stat");
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> w = Words(line);
    if (w.empty() || w[0] != "cpu") continue;
    // user nice system idle iowait irq softirq steal: busy is all but idle and iowait (guest
    // time is already counted in user).
    const size_t busy_fields[] = {1, 2, 3, 6, 7, 8};
    busy = 0;
    for (size_t i : busy_fields) busy += i < w.size() ? Number(w[i]) : 0;
    return true;
  }
  return false;
}

struct ProcStat {
  int ppid = 0;
  uint64_t jiffies = 0;  // utime + stime
};

// <proc_root>/PID/stat; the command name (field 2) may hold spaces and parentheses, so the
// fields are counted from the last ')'.
std::optional<ProcStat> ReadProcStat(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  const std::vector<std::string> w = Words(text.substr(paren + 1));
  // w[0] is field 3 (state): ppid is field 4, utime and stime fields 14 and 15.
  if (w.size() < 13) return std::nullopt;
  return ProcStat{static_cast<int>(Number(w[1])), Number(w[11]) + Number(w[12])};
}

std::map<int, uint64_t> ExcludedJiffies(const std::string& proc_root, std::vector<int> roots) {
  std::map<int, ProcStat> all;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc_root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    // A process that ended since the listing has no stat file: it is skipped.
    if (auto stat = ReadProcStat(entry.path().string() + "/stat")) {
      all.emplace(static_cast<int>(Number(name)), *stat);
    }
  }
  std::multimap<int, int> children;  // ppid -> pid
  for (const auto& [pid, stat] : all) children.emplace(stat.ppid, pid);
  std::map<int, uint64_t> out;
  while (!roots.empty()) {
    const int pid = roots.back();
    roots.pop_back();
    auto it = all.find(pid);
    if (it == all.end() || out.count(pid) != 0) continue;
    out[pid] = it->second.jiffies;
    for (auto [c, end] = children.equal_range(pid); c != end; ++c) roots.push_back(c->second);
  }
  return out;
}

bool DigitsOnly(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// Whether `name` is a partition of `disk`: sda1 of sda, nvme0n1p2 of nvme0n1 (a disk whose name
// ends in a digit numbers its partitions after a 'p').
bool IsPartitionOf(const std::string& name, const std::string& disk) {
  if (name.size() <= disk.size() || name.compare(0, disk.size(), disk) != 0) return false;
  std::string_view rest = std::string_view(name).substr(disk.size());
  if (std::isdigit(static_cast<unsigned char>(disk.back()))) {
    if (rest.front() != 'p') return false;
    rest.remove_prefix(1);
  }
  return DigitsOnly(rest);
}

// Sectors read and written (or, `reads_only`, read) per whole disk.
std::map<std::string, uint64_t> ReadDisks(const std::string& proc_root, bool reads_only = false) {
  std::map<std::string, uint64_t> sectors;
  std::ifstream in(proc_root + "/diskstats");
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> w = Words(line);
    if (w.size() < 10) continue;
    const std::string& name = w[2];
    // Not disks (loop, RAM) or views of other disks (device mapper, md RAID) counted there.
    const bool virtual_device = (name.starts_with("loop") || name.starts_with("ram") ||
                                 name.starts_with("zram") || name.starts_with("md")) ||
                                name.starts_with("dm-");
    if (virtual_device) continue;
    // sectors read (field 6), written (field 10)
    sectors[name] = Number(w[5]) + (reads_only ? 0 : Number(w[9]));
  }
  for (auto it = sectors.begin(); it != sectors.end();) {
    bool partition = false;
    for (const auto& [disk, _] : sectors) partition = partition || IsPartitionOf(it->first, disk);
    it = partition ? sectors.erase(it) : std::next(it);
  }
  return sectors;
}

uint64_t ReadChurnBytes(const std::string& proc_root) {
  static const uint64_t page = static_cast<uint64_t>(std::max(sysconf(_SC_PAGESIZE), 4096L));
  uint64_t kib_in = 0;
  uint64_t pages_reclaimed = 0;
  std::ifstream in(proc_root + "/vmstat");
  for (std::string key, value; in >> key >> value;) {
    if (key == "pgpgin") kib_in = Number(value);
    // Newer kernels: pgsteal_kswapd, pgsteal_direct; older ones count them per zone.
    if (key == "pgsteal_kswapd" || key == "pgsteal_direct" || key.starts_with("pgsteal_kswapd_") ||
        key.starts_with("pgsteal_direct_")) {
      pages_reclaimed += Number(value);
    }
  }
  return kib_in * 1024 + pages_reclaimed * page;
}

uint64_t Grew(uint64_t before, uint64_t after) { return after > before ? after - before : 0; }

Rates Between(const Sample& a, const Sample& b) {
  Rates r;
  const double seconds = std::chrono::duration<double>(b.at - a.at).count();
  if (!a.valid || !b.valid || seconds <= 0) return r;
  static const double ticks = static_cast<double>(std::max(sysconf(_SC_CLK_TCK), 1L));
  // A process of the excluded trees that is new since `a` counts whole; one that ended is lost
  // (its time then counts as other work, which can only overstate the noise).
  uint64_t excluded = 0;
  for (const auto& [pid, jiffies] : b.excluded) {
    auto before = a.excluded.find(pid);
    excluded +=
        before == a.excluded.end() || before->second > jiffies ? jiffies : jiffies - before->second;
  }
  const uint64_t busy = Grew(a.busy_jiffies, b.busy_jiffies);
  r.other_cpu_cores = busy > excluded ? static_cast<double>(busy - excluded) / ticks / seconds : 0;
  uint64_t sectors = 0;
  for (const auto& [disk, after] : b.disks) {
    if (auto before = a.disks.find(disk); before != a.disks.end()) {
      sectors += Grew(before->second, after);
    }
  }
  r.disk_mb_per_s = static_cast<double>(sectors) * 512 / 1e6 / seconds;
  r.page_cache_mb_per_s = static_cast<double>(Grew(a.churn_bytes, b.churn_bytes)) / 1e6 / seconds;
  return r;
}

// 0.5, 1.25, 20: two decimals at most, no trailing zeros.
std::string Format(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  std::string out = text;
  while (out.ends_with('0')) out.pop_back();
  if (out.ends_with('.')) out.pop_back();
  return out;
}

NoiseReport Judge(const Rates& r, const NoiseLimits& limits) {
  NoiseReport report;
  report.other_cpu_cores = r.other_cpu_cores;
  report.disk_mb_per_s = r.disk_mb_per_s;
  report.page_cache_mb_per_s = r.page_cache_mb_per_s;
  auto over = [&](double value, double limit, const std::string& what, const std::string& unit) {
    if (value <= limit) return;
    if (!report.reason.empty()) report.reason += "; ";
    report.reason += what + " " + Format(value) + unit + " (limit " + Format(limit) + ")";
    report.noisy = true;
  };
  over(r.other_cpu_cores, limits.other_cpu_cores, "other processes used", " cores");
  over(r.disk_mb_per_s, limits.disk_mb_per_s, "disk", " MB/s");
  over(r.page_cache_mb_per_s, limits.page_cache_mb_per_s, "page-cache churn", " MB/s");
  return report;
}

}  // namespace

struct QuietGuard::Impl {
  NoiseLimits limits;
  std::function<std::vector<int>()> excluded_roots;
  std::string proc_root;

  Sample Take() const {
    Sample s;
    s.at = Clock::now();
    std::vector<int> roots = excluded_roots ? excluded_roots() : std::vector<int>();
    roots.push_back(static_cast<int>(getpid()));
    s.valid = ReadBusy(proc_root, s.busy_jiffies);
    s.excluded = ExcludedJiffies(proc_root, std::move(roots));
    s.disks = ReadDisks(proc_root);
    s.churn_bytes = ReadChurnBytes(proc_root);
    return s;
  }

  // The sampler's state, guarded by mu.
  std::mutex mu;
  std::condition_variable wake;
  bool stopping = false;
  Sample last;
  Rates busiest;  // the maximum of each rate over the intervals so far
  bool sampled = false;
  std::thread sampler;

  void Note(const Sample& next) {
    // A sample that could not read <proc_root>/stat (being rewritten, say) is skipped: the next
    // interval starts from the last good one.
    if (!next.valid && last.valid) return;
    const Rates r = Between(last, next);
    busiest.other_cpu_cores = std::max(busiest.other_cpu_cores, r.other_cpu_cores);
    busiest.disk_mb_per_s = std::max(busiest.disk_mb_per_s, r.disk_mb_per_s);
    busiest.page_cache_mb_per_s = std::max(busiest.page_cache_mb_per_s, r.page_cache_mb_per_s);
    sampled = true;
    last = next;
  }
};

uint64_t DiskReadBytes(const std::string& proc_root) {
  uint64_t sectors = 0;
  for (const auto& [disk, read] : ReadDisks(proc_root, /*reads_only=*/true)) sectors += read;
  return sectors * 512;  // diskstats counts 512-byte sectors whatever the device's
}

QuietGuard::QuietGuard(NoiseLimits limits, std::function<std::vector<int>()> excluded_roots,
                       std::string proc_root)
    : impl_(std::make_unique<Impl>()) {
  impl_->limits = limits;
  impl_->excluded_roots = std::move(excluded_roots);
  impl_->proc_root = std::move(proc_root);
}

QuietGuard::~QuietGuard() { Stop(); }

NoiseReport QuietGuard::Check(std::chrono::milliseconds window) {
  const Sample before = impl_->Take();
  std::this_thread::sleep_for(window);  // the window being measured, not a wait for a condition
  return Judge(Between(before, impl_->Take()), impl_->limits);
}

void QuietGuard::Start(std::chrono::milliseconds interval) {
  Stop();
  Impl& impl = *impl_;
  {
    std::lock_guard lock(impl.mu);
    impl.stopping = false;
    impl.busiest = Rates();
    impl.sampled = false;
    impl.last = impl.Take();
  }
  impl.sampler = std::thread([&impl, interval] {
    std::unique_lock lock(impl.mu);
    while (!impl.wake.wait_for(lock, interval, [&] { return impl.stopping; })) {
      lock.unlock();
      const Sample next = impl.Take();
      lock.lock();
      impl.Note(next);
    }
  });
}

NoiseReport QuietGuard::Stop() {
  Impl& impl = *impl_;
  if (!impl.sampler.joinable()) return NoiseReport();
  {
    std::lock_guard lock(impl.mu);
    impl.stopping = true;
  }
  impl.wake.notify_all();
  impl.sampler.join();
  // The part of the span since the last sample counts too, unless it is too short to measure.
  const Sample final_sample = impl.Take();
  std::lock_guard lock(impl.mu);
  if (final_sample.at - impl.last.at >= std::chrono::milliseconds(100) || !impl.sampled) {
    impl.Note(final_sample);
  }
  return Judge(impl.busiest, impl.limits);
}

}  // namespace swapd
