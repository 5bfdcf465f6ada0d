// QuietGuard: is something besides the benchmark busy on this machine? Background downloads or
// builds fake an 80% regression on MoE models served from the page cache, so `swapd bench`
// samples /proc before and during each measurement and marks the row "noisy" (or refuses, with
// --strict). It measures, over a window: the CPU time of every process outside the excluded trees
// (swapd, its backends, the bench itself) in cores, disk reads+writes in MB/s (/proc/diskstats,
// whole disks only), and page-cache churn in MB/s (/proc/vmstat: pages read in plus pages
// evicted). `proc_root` is "/proc" (tests give a directory laid out like it).
// Thread safe: Start/Stop/Check may be called from one thread while the sampler runs on its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace swapd {

struct NoiseLimits {
  double other_cpu_cores = 0.5;     // CPU used by other processes, in cores
  double disk_mb_per_s = 20;        // disk reads + writes
  double page_cache_mb_per_s = 50;  // page-cache churn
};

struct NoiseReport {
  bool noisy = false;
  std::string reason;  // "other processes used 1.3 cores (limit 0.5); disk 45 MB/s (limit 20)"
  double other_cpu_cores = 0;  // the window's averages (the busiest sample interval for Stop)
  double disk_mb_per_s = 0;
  double page_cache_mb_per_s = 0;
};

// Bytes read from the whole disks since boot (/proc/diskstats; loop, RAM, device-mapper and md
// devices and partitions left out, as for the noise check).
uint64_t DiskReadBytes(const std::string& proc_root = "/proc");

class QuietGuard {
 public:
  // `excluded_roots`: called at each sample; the pids whose whole process trees (descendants
  // found through /proc/PID/stat's ppid) are the benchmark's own work. The bench's own pid is
  // always excluded.
  QuietGuard(NoiseLimits limits, std::function<std::vector<int>()> excluded_roots,
             std::string proc_root = "/proc");
  ~QuietGuard();  // stops the sampler
  QuietGuard(const QuietGuard&) = delete;
  QuietGuard& operator=(const QuietGuard&) = delete;

  // Samples twice, `window` apart, and judges that window (the check before a run).
  NoiseReport Check(std::chrono::milliseconds window);
  // Samples every `interval` on a thread of its own until Stop, which judges the whole span: noisy
  // when any interval was over a limit.
  void Start(std::chrono::milliseconds interval = std::chrono::milliseconds(500));
  NoiseReport Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace swapd
