// memory-bench: what memory-aware residency costs swapd.
//  1. Decision: the Scheduler deciding a load under RAM and VRAM budgets with 10 models (9 running,
//     one of them protected, the load needing evictions): a request arrives and is withdrawn,
//     which runs the group rules, the budget (FitToBudget) and the protection check twice. Also
//     FitToBudget alone.
//  2. Measuring: one sample of 10 running backends (fake-llama-server --alloc-mb 64, each naming a
//     4 GiB sparse GGUF) as FootprintMonitor takes it: the process group's /proc status, the files'
//     page-cache residency (mincore) and nvidia-smi when one is on PATH. CPU time of this process
//     and its children (the GPU tool) per sample, as a share of one core at one sample a second.
//  3. Prefetch: a 512 MiB file pushed out of the page cache (fdatasync + POSIX_FADV_DONTNEED) read
//     by PrefetchFiles, against a plain sequential read(2) of the same file in the same run; and
//     PrefetchFiles again once everything is cached (the cost of finding nothing to do).
// Results are for bench/README.md, section "Memory-aware residency".
// Usage: memory-bench FAKE_BACKEND [decisions=20000] [samples=30] [prefetch_mib=512]
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "backends/residency_policy.h"
#include "backends/scheduler.h"
#include "memory/memory_meter.h"
#include "memory/page_prefetch.h"
#include "memory/process_memory.h"
#include "memory/tool_run.h"

extern char** environ;

namespace {

using namespace swapd;
using Clock = std::chrono::steady_clock;
constexpr uint64_t kGiB = uint64_t{1} << 30;

class NoEffects : public SchedulerEffects {
 public:
  void StartModel(const std::string&) override {}
  void StopModel(const std::string&, StopReason) override {}
  void Admit(RequestId) override {}
  void Reject(RequestId, const Status&) override {}
};

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

void Decisions(int n) {
  Config c;
  c.memory.budget.ram = 14 * kGiB;
  c.memory.budget.vram[0] = 4 * kGiB;
  c.memory.wait_for_protected = true;
  GroupConfig& g = c.groups[std::string(kDefaultGroup)];
  g.name = std::string(kDefaultGroup);
  g.swap = false;
  g.exclusive = false;
  for (int i = 0; i < 10; ++i) {
    ModelConfig& m = c.models["m" + std::to_string(i)];
    m.id = "m" + std::to_string(i);
    m.group = g.name;
    m.memory.ram = (1 + i % 3) * kGiB / 2;
    if (i % 4 == 0) m.memory.vram[0] = kGiB;
    g.members.push_back(m.id);
  }
  c.models["m0"].swappable = false;
  c.models["m9"].memory.ram = 13 * kGiB;  // must evict, and m0 blocks it: it waits
  NoEffects effects;
  Scheduler s(c, &effects);
  SchedulerTime now{};
  RequestId id = 1;
  for (int i = 0; i < 9; ++i) {
    const std::string model = "m" + std::to_string(i);
    s.RequestArrived(id, model);
    s.StartFinished(model, Status::Ok(), now);
    s.RequestFinished(id++, now);
    now += std::chrono::seconds(1);
  }
  std::vector<double> us;
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    s.RequestArrived(id, "m9");
    s.RequestWithdrawn(id++);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 2);
  }
  std::printf("decision (Scheduler, 10 models, budget + protection): p50 %.2f us, p99 %.2f us\n",
              Percentile(us, 0.5), Percentile(us, 0.99));

  std::vector<ResidentModel> resident;
  std::mt19937 rng(7);
  for (int i = 0; i < 9; ++i) {
    ResidentModel r;
    r.model = "m" + std::to_string(i);
    r.cost.ram = (1 + rng() % 3) * kGiB;
    r.cost.vram[0] = (rng() % 2) * kGiB;
    r.last_used = static_cast<int64_t>(rng() % 100);
    r.protect = i == 0;
    resident.push_back(r);
  }
  Footprint need;
  need.ram = 6 * kGiB;
  need.vram[0] = 2 * kGiB;
  MemoryAmount budget = c.memory.budget;
  us.clear();
  size_t evicted = 0;
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    BudgetDecision d = FitToBudget(budget, "new", need, resident);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    evicted += d.evict.size();
  }
  std::printf(
      "FitToBudget alone (9 residents, 2 dimensions): p50 %.2f us, p99 %.2f us (%zu "
      "evictions chosen)\n",
      Percentile(us, 0.5), Percentile(us, 0.99), evicted / static_cast<size_t>(n));
}

double CpuSeconds() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(self.ru_utime) + s(self.ru_stime) + s(children.ru_utime) + s(children.ru_stime);
}

void Measuring(const std::string& fake, int samples) {
  const std::string dir = std::filesystem::temp_directory_path() / "swapd-memory-bench";
  std::filesystem::create_directories(dir);
  std::vector<pid_t> pids;
  std::vector<std::vector<std::string>> files;
  for (int i = 0; i < 10; ++i) {
    const std::string gguf = dir + "/model-" + std::to_string(i) + ".gguf";
    std::ofstream(gguf).close();
    std::filesystem::resize_file(gguf, 4 * kGiB);
    std::vector<std::string> args = {fake, "--port", "0", "--alloc-mb", "64", "--lora", gguf};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawn_file_actions_t io;
    posix_spawn_file_actions_init(&io);
    posix_spawn_file_actions_addopen(&io, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&io, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    if (posix_spawn(&pid, fake.c_str(), &io, &attr, argv.data(), environ) != 0) {
      std::perror("posix_spawn");
      std::exit(1);
    }
    pids.push_back(pid);
    files.push_back(ModelFilesOf(args));
  }
  // Wait until every backend holds its 64 MiB.
  for (auto deadline = Clock::now() + std::chrono::seconds(30); Clock::now() < deadline;) {
    bool all = std::all_of(pids.begin(), pids.end(),
                           [](pid_t p) { return ProcessGroupMemory(p).anon >= 60 << 20; });
    if (all) break;
    usleep(50000);
  }
  // As FootprintMonitor samples: one walk of /proc for every group, each group's status files,
  // nvidia-smi when present; the model files' page cache every 30 s (kFilesEvery), so 1/30 of a
  // scan per sample.
  double files_ms = 0;
  {
    const double cpu0 = CpuSeconds();
    int64_t sink = 0;
    for (int s = 0; s < samples; ++s) {
      for (const auto& f : files) sink += FilesInPageCache(f).bytes;
    }
    files_ms = (CpuSeconds() - cpu0) * 1000 / samples;
    std::printf("page cache of 10 x 4 GiB model files: %.2f ms CPU per scan (checksum %lld)\n",
                files_ms, static_cast<long long>(sink % 1000));
  }
  for (const bool gpu : {false, true}) {
    if (gpu && FindOnPath("nvidia-smi").empty()) continue;
    const double cpu0 = CpuSeconds();
    int64_t sink = 0;
    for (int s = 0; s < samples; ++s) {
      GpuReading reading = gpu ? ReadNvidiaGpus() : GpuReading{};
      std::map<int, std::vector<int>> members =
          ProcessGroupsPids(std::vector<int>(pids.begin(), pids.end()));
      for (const auto& [pgid, group] : members) {
        sink += ProcessMemoryOf(group).rss;
        sink += static_cast<int64_t>(GpuMemoryOfPids(reading, group).size());
      }
    }
    const double cpu_ms = (CpuSeconds() - cpu0) * 1000 / samples + files_ms / 30;
    std::printf(
        "one sample of 10 models%s: %.2f ms CPU with the files' share = %.3f%% of one "
        "core at one sample a second (checksum %lld)\n",
        gpu ? " with nvidia-smi" : " (no GPU tool)", cpu_ms, cpu_ms / 10,
        static_cast<long long>(sink % 1000));
  }
  for (pid_t p : pids) kill(-p, SIGKILL);
  for (pid_t p : pids) waitpid(p, nullptr, 0);
  std::filesystem::remove_all(dir);
}

// Drops `path` from the page cache; false when its pages stay (tmpfs).
bool DropFromCache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  const FileCache c = FilesInPageCache({path});
  return c.cached < c.bytes / 10;
}

void Prefetch(int64_t mib) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "swapd-prefetch-bench.gguf").string();
  {
    std::ofstream out(path, std::ios::binary);
    std::string chunk(1 << 20, '\0');
    std::mt19937 rng(7);
    for (int64_t i = 0; i < mib; ++i) {
      for (auto& c : chunk) c = static_cast<char>(rng());
      out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    }
  }
  const int64_t bytes = mib << 20;
  auto rate = [](int64_t read, double seconds) {
    return static_cast<double>(read) / (1 << 20) / seconds;
  };
  for (int round = 0; round < 3; ++round) {
    if (!DropFromCache(path)) {
      std::printf("prefetch: the file stays cached after POSIX_FADV_DONTNEED (tmpfs?): skipped\n");
      break;
    }
    Clock::time_point t0 = Clock::now();
    {
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      std::vector<char> buffer(4 << 20);
      while (::read(fd, buffer.data(), buffer.size()) > 0) {
      }
      ::close(fd);
    }
    const double direct = std::chrono::duration<double>(Clock::now() - t0).count();
    DropFromCache(path);
    const double cpu0 = CpuSeconds();
    const PrefetchResult cold = PrefetchFiles({path}, int64_t{1} << 40);
    const double cold_cpu = CpuSeconds() - cpu0;
    const double cpu1 = CpuSeconds();
    const PrefetchResult warm = PrefetchFiles({path}, int64_t{1} << 40);
    const double warm_cpu = CpuSeconds() - cpu1;
    std::printf(
        "prefetch of a %lld MiB file: read %lld MiB of it from disk at %.0f MiB/s, "
        "%.0f ms CPU; plain read(2) of it: %.0f MiB/s (ratio %.2f); again when cached: %.2f "
        "ms (%.2f ms CPU, read %lld)\n",
        static_cast<long long>(mib), static_cast<long long>(cold.read >> 20),
        rate(cold.read, cold.seconds), cold_cpu * 1000, rate(bytes, direct),
        rate(cold.read, cold.seconds) / rate(bytes, direct), warm.seconds * 1000, warm_cpu * 1000,
        static_cast<long long>(warm.read));
  }
  std::filesystem::remove(path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: memory-bench FAKE_BACKEND [decisions=20000] [samples=30] "
                 "[prefetch_mib=512]\n");
    return 2;
  }
  Decisions(argc > 2 ? std::atoi(argv[2]) : 20000);
  Measuring(argv[1], argc > 3 ? std::atoi(argv[3]) : 30);
  Prefetch(argc > 4 ? std::atoi(argv[4]) : 512);
  return 0;
}
