#include "memory/memory_meter.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>

#include "backends/proc_scan.h"
#include "base/parse_int.h"
#include "base/text.h"
#include "memory/process_memory.h"
#include "memory/tool_run.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kMiB = 1024 * 1024;

// The comma-separated fields of each non-blank line, trimmed.
std::vector<std::vector<std::string_view>> CsvRows(std::string_view text) {
  std::vector<std::vector<std::string_view>> rows;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = TrimSpace(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.empty()) continue;
    std::vector<std::string_view> fields;
    for (size_t comma; (comma = line.find(',')) != std::string_view::npos;) {
      fields.push_back(TrimSpace(line.substr(0, comma)));
      line.remove_prefix(comma + 1);
    }
    fields.push_back(TrimSpace(line));
    rows.push_back(std::move(fields));
  }
  return rows;
}

// A MiB figure in bytes; "[N/A]" and its kin are kUnknownBytes.
bool ParseMiB(std::string_view text, int64_t* bytes) {
  if (!text.empty() && text.front() == '[') {
    *bytes = kUnknownBytes;
    return true;
  }
  int64_t mib = 0;
  if (!ParseInt64(text, &mib) || mib < 0) return false;
  *bytes = mib * kMiB;
  return true;
}

}  // namespace

ProcessMemory ProcessGroupMemory(int pgid) { return ProcessMemoryOf(ProcessGroupPids(pgid)); }

ProcessMemory ProcessMemoryOf(const std::vector<int>& pids) {
  ProcessMemory total;
  const std::pair<std::string_view, int64_t ProcessMemory::*> kFields[] = {
      {"VmRSS:", &ProcessMemory::rss},
      {"RssAnon:", &ProcessMemory::anon},
      {"RssFile:", &ProcessMemory::file},
      {"RssShmem:", &ProcessMemory::shmem}};
  for (int pid : pids) {
    // Empty when the process has gone: it adds nothing.
    std::istringstream status(proc::ReadText("/proc/" + std::to_string(pid) + "/status"));
    std::string key;
    int64_t kb = 0;
    while (status >> key) {
      for (const auto& [name, field] : kFields) {
        if (key == name && status >> kb) total.*field += kb * 1024;
      }
      status.clear();
      status.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    }
  }
  return total;
}

std::map<int, GpuDevice> ParseNvidiaGpuList(std::string_view text) {
  std::map<int, GpuDevice> devices;
  for (const auto& row : CsvRows(text)) {
    int64_t index = 0;
    GpuDevice device;
    if (row.size() != 4 || !ParseInt64(row[0], &index) || row[1].empty() ||
        !ParseMiB(row[2], &device.total_bytes) || !ParseMiB(row[3], &device.used_bytes)) {
      continue;
    }
    device.uuid = std::string(row[1]);
    devices[static_cast<int>(index)] = device;
  }
  return devices;
}

std::map<int, std::map<int, int64_t>> ParseNvidiaComputeApps(
    std::string_view text, const std::map<std::string, int>& uuid_to_index) {
  std::map<int, std::map<int, int64_t>> by_pid;
  for (const auto& row : CsvRows(text)) {
    int64_t pid = 0, bytes = 0;
    if (row.size() != 3 || !ParseInt64(row[0], &pid) || pid <= 0 || !ParseMiB(row[2], &bytes)) {
      continue;
    }
    auto gpu = uuid_to_index.find(std::string(row[1]));
    if (gpu == uuid_to_index.end()) continue;
    auto [slot, inserted] = by_pid[static_cast<int>(pid)].emplace(gpu->second, bytes);
    if (!inserted) {
      slot->second = (slot->second == kUnknownBytes || bytes == kUnknownBytes)
                         ? kUnknownBytes
                         : slot->second + bytes;
    }
  }
  return by_pid;
}

GpuReading ReadNvidiaGpus(std::chrono::milliseconds timeout) {
  GpuReading reading;
  reading.tool = FindOnPath("nvidia-smi");
  if (reading.tool.empty()) return reading;
  const Clock::time_point start = Clock::now();
  ToolRun gpus =
      RunTool(reading.tool,
              {"--query-gpu=index,uuid,memory.total,memory.used", "--format=csv,noheader,nounits"},
              timeout);
  if (!gpus.failure.empty()) {
    reading.error = gpus.failure;
    return reading;
  }
  reading.devices = ParseNvidiaGpuList(gpus.out);
  // One budget for both queries.
  const auto left = std::max(
      std::chrono::milliseconds(1),
      timeout - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start));
  ToolRun apps = RunTool(
      reading.tool,
      {"--query-compute-apps=pid,gpu_uuid,used_memory", "--format=csv,noheader,nounits"}, left);
  if (!apps.failure.empty()) {
    reading.error = apps.failure;
    return reading;
  }
  std::map<std::string, int> uuid_to_index;
  for (const auto& [index, device] : reading.devices) uuid_to_index[device.uuid] = index;
  reading.by_pid = ParseNvidiaComputeApps(apps.out, uuid_to_index);
  reading.available = true;
  return reading;
}

std::map<int, int64_t> GpuMemoryOfPids(const GpuReading& reading, const std::vector<int>& pids) {
  std::map<int, int64_t> sums;
  for (int pid : pids) {
    auto found = reading.by_pid.find(pid);
    if (found == reading.by_pid.end()) continue;
    for (const auto& [gpu, bytes] : found->second) {
      auto [sum, inserted] = sums.emplace(gpu, bytes);
      if (inserted) continue;
      sum->second = (sum->second == kUnknownBytes || bytes == kUnknownBytes) ? kUnknownBytes
                                                                             : sum->second + bytes;
    }
  }
  return sums;
}

std::map<int, int64_t> GpuMemoryOfGroup(const GpuReading& reading, int pgid) {
  return GpuMemoryOfPids(reading, ProcessGroupPids(pgid));
}

namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// For llama.cpp's split GGUF parts, "X-00002-of-00003.gguf": every part in order, the given one
// always and the others when they exist. Just `path` for any other name.
std::vector<std::string> SplitParts(const std::string& path) {
  constexpr std::string_view kSuffix = ".gguf";
  constexpr size_t kTail = 15;  // "-00002-of-00003"
  const std::string_view stem = std::string_view(path).substr(0, path.size() - kSuffix.size());
  if (!EndsWith(path, kSuffix) || stem.size() <= kTail) return {path};
  const std::string_view tail = stem.substr(stem.size() - kTail);
  int64_t part = 0, count = 0;
  if (tail[0] != '-' || tail.substr(6, 4) != "-of-" || !ParseInt64(tail.substr(1, 5), &part) ||
      !ParseInt64(tail.substr(10, 5), &count) || part < 1 || part > count) {
    return {path};
  }
  std::vector<std::string> parts;
  for (int64_t i = 1; i <= count; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "-%05d-of-%05d.gguf", static_cast<int>(i),
                  static_cast<int>(count));
    std::string sibling = std::string(stem.substr(0, stem.size() - kTail)) + name;
    struct stat st;
    if (i == part || ::stat(sibling.c_str(), &st) == 0) parts.push_back(std::move(sibling));
  }
  return parts;
}

}  // namespace

std::vector<std::string> ModelFilesOf(const std::vector<std::string>& argv) {
  std::vector<std::string> named;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if ((word == "-m" || word == "--model") && i + 1 < argv.size()) {
      named.push_back(argv[++i]);
    } else if (word.rfind("--model=", 0) == 0) {
      named.push_back(word.substr(8));
    } else if (EndsWith(word, ".gguf")) {
      named.push_back(word);
    }
  }
  std::vector<std::string> files;
  std::set<std::string> seen;
  for (const std::string& path : named) {
    if (path.empty()) continue;
    for (std::string& part : SplitParts(path)) {
      if (seen.insert(part).second) files.push_back(std::move(part));
    }
  }
  return files;
}

bool ResidencyVisible(const std::string& path, const struct stat& st) {
  return st.st_uid == ::geteuid() || ::geteuid() == 0 ||
         ::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) == 0;
}

int64_t ResidentBytes(int fd, int64_t offset, int64_t length) {
  constexpr int64_t kWindow = int64_t{1} << 30;  // keeps the mincore vector at 256 KiB
  const int64_t page = ::sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> pages;
  int64_t resident = 0;
  for (int64_t at = offset; at < offset + length; at += kWindow) {
    const size_t size = static_cast<size_t>(std::min(kWindow, offset + length - at));
    void* window = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, at);
    if (window == MAP_FAILED) break;
    pages.resize((size + page - 1) / page);
    if (::mincore(window, size, pages.data()) == 0) {
      int64_t in_window = 0;
      for (unsigned char p : pages) in_window += p & 1;
      resident += std::min<int64_t>(in_window * page, size);  // the last page may be partial
    }
    ::munmap(window, size);
  }
  return resident;
}

FileCache FilesInPageCache(const std::vector<std::string>& paths) {
  FileCache cache;
  for (const std::string& path : paths) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ++cache.missing;
      if (fd >= 0) ::close(fd);
      continue;
    }
    cache.bytes += st.st_size;
    if (st.st_size > 0 && !ResidencyVisible(path, st)) {
      ++cache.unmeasured;
    } else if (st.st_size > 0) {
      cache.cached += ResidentBytes(fd, 0, st.st_size);
    }
    ::close(fd);
  }
  return cache;
}

}  // namespace swapd
