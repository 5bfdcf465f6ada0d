// Memory meters: what a backend's process group holds in RAM (from /proc), what each process holds
// on NVIDIA GPUs (from nvidia-smi) or AMD GPUs (rocm-smi, in amd_gpu_meter.cpp), and how much of a
// model's files sits in the page cache (mmap + mincore). They measure only; deciding what to unload
// is someone else's job. Thread safe: every call reads the system afresh and keeps no state.
// ReadNvidiaGpus runs a child process and blocks for up to its timeout; call it off the event loop.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace swapd {

// Resident memory of a process group, in bytes, summed over its members (/proc/<pid>/status).
struct ProcessMemory {
  int64_t rss = 0;    // VmRSS
  int64_t anon = 0;   // RssAnon: heap, KV cache, weights copied off the file
  int64_t file = 0;   // RssFile: mapped files, e.g. mmapped model weights (also in page cache)
  int64_t shmem = 0;  // RssShmem
};

// Sums over every process whose process group is `pgid`; processes that exit during the read are
// skipped. All zero when the group has no member.
ProcessMemory ProcessGroupMemory(int pgid);
// The same summed over `pids` (ProcessGroupsPids finds several groups' members in one walk).
ProcessMemory ProcessMemoryOf(const std::vector<int>& pids);

// A figure nvidia-smi reports as "[N/A]" or "[Not Supported]".
inline constexpr int64_t kUnknownBytes = -1;

struct GpuDevice {
  std::string uuid;
  int64_t total_bytes = 0;  // or kUnknownBytes
  int64_t used_bytes = 0;   // or kUnknownBytes
};

struct GpuReading {
  // True when the tool ran and its queries succeeded. False without `error` when no tool is on
  // PATH (no GPU to speak of); false with `error` when the tool failed or timed out.
  bool available = false;
  std::string tool;   // the path of the tool that ran; empty when none was found
  std::string error;  // e.g. "nvidia-smi: exit status 9: Failed to initialize NVML: ..."
  std::map<int, GpuDevice> devices;  // by GPU index
  // Memory each process holds on each GPU (pid -> GPU index -> bytes, or kUnknownBytes).
  std::map<int, std::map<int, int64_t>> by_pid;
};

// Runs `nvidia-smi`, looked up on PATH at each call, with --query-gpu and --query-compute-apps. A
// run that takes longer than `timeout` is killed (with anything it started) and reported in
// `error`. Never throws.
GpuReading ReadNvidiaGpus(std::chrono::milliseconds timeout = std::chrono::seconds(5));

// Parse the output of `nvidia-smi --query-gpu=index,uuid,memory.total,memory.used
// --format=csv,noheader,nounits` (MiB). Lines that do not parse are skipped. Used by tests.
std::map<int, GpuDevice> ParseNvidiaGpuList(std::string_view text);
// Parse the output of `nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory
// --format=csv,noheader,nounits` (MiB); a pid listed twice on one GPU is summed. Lines that do not
// parse, or name a GPU not in `uuid_to_index`, are skipped. Used by tests.
std::map<int, std::map<int, int64_t>> ParseNvidiaComputeApps(
    std::string_view text, const std::map<std::string, int>& uuid_to_index);

// AMD GPUs: runs `rocm-smi` (looked up on PATH) with --showmeminfo vram --json and --showpids, and
// --showpidgpus when there is more than one GPU. rocm-smi gives one VRAM figure per process: a
// process on several GPUs is kUnknownBytes on each. Never throws; bounded by `timeout` in all.
GpuReading ReadAmdGpus(std::chrono::milliseconds timeout = std::chrono::seconds(5));

// The GPU reading of this machine: NVIDIA's when nvidia-smi is on PATH, else AMD's (rocm-smi);
// neither: not available, no error.
GpuReading ReadGpus(std::chrono::milliseconds timeout = std::chrono::seconds(5));

// Parse `rocm-smi --showmeminfo vram --json`: {"card0": {"VRAM Total Memory (B)": "...",
// "VRAM Total Used Memory (B)": "..."}}; the index is the card number, the uuid "cardN".
std::map<int, GpuDevice> ParseRocmMemInfo(std::string_view json_text);

struct RocmProcess {
  int gpus = 0;                        // how many GPUs it uses
  int64_t vram_bytes = kUnknownBytes;  // on all of them together
};
// Parse the `rocm-smi --showpids` table (PID, PROCESS NAME, GPU(s), VRAM USED, SDMA USED,
// CU OCCUPANCY); "UNKNOWN" figures are kUnknownBytes.
std::map<int, RocmProcess> ParseRocmPids(std::string_view text);
// Parse `rocm-smi --showpidgpus`: "PID 123 is using 2 DRM device(s):" then a line "0 1".
std::map<int, std::vector<int>> ParseRocmPidGpus(std::string_view text);
// pid -> GPU index -> bytes: on a single-GPU machine every process is on that GPU; otherwise a
// process on one GPU (by `gpus_of_pid`) has its figure there, one on several is unknown on each.
std::map<int, std::map<int, int64_t>> RocmMemoryByPid(
    const std::map<int, GpuDevice>& devices, const std::map<int, RocmProcess>& processes,
    const std::map<int, std::vector<int>>& gpus_of_pid);

// GPU index -> bytes held by the processes in `pids` (see ProcessGroupPids in process_memory.h).
// A GPU on which any of them holds kUnknownBytes sums to kUnknownBytes.
std::map<int, int64_t> GpuMemoryOfPids(const GpuReading& reading, const std::vector<int>& pids);
// The same for every process of group `pgid`.
std::map<int, int64_t> GpuMemoryOfGroup(const GpuReading& reading, int pgid);

// The model files named in a backend's argv: the values of -m/--model/--model=PATH and every other
// word ending in ".gguf", deduplicated, in order. A split GGUF part "X-00001-of-00003.gguf" brings
// its sibling parts that exist on disk (the only file-system access).
std::vector<std::string> ModelFilesOf(const std::vector<std::string>& argv);

struct FileCache {
  int64_t bytes = 0;   // total size of the files found
  int64_t cached = 0;  // of which resident in the page cache
  int missing = 0;     // paths that could not be opened, or are not regular files
  // Files whose residency the kernel hides: since Linux 5.1, mincore reports every page of a file
  // resident unless the caller owns it or may write it (or has CAP_FOWNER). Their size counts in
  // `bytes`, not in `cached`.
  int unmeasured = 0;
};

// Whether mincore tells the truth about the file at `path` (see FileCache::unmeasured).
bool ResidencyVisible(const std::string& path, const struct stat& st);
// Bytes of `length` bytes of `fd` from `offset` (a multiple of the page size) that are in the page
// cache; mapped 1 GiB at a time, no data read.
int64_t ResidentBytes(int fd, int64_t offset, int64_t length);

// Size and page-cache residency of `paths`. Reads no file data (mapping without touching pages
// does not fault them in); works through each file in 1 GiB windows.
FileCache FilesInPageCache(const std::vector<std::string>& paths);

}  // namespace swapd
