#include "memory/page_prefetch.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>

#include <spdlog/spdlog.h>

#include "backends/proc_scan.h"
#include "config/memory.h"
#include "memory/memory_meter.h"
#include "memory/process_memory.h"

namespace swapd {
namespace {

constexpr int64_t kWindow = int64_t{64} << 20;
constexpr size_t kChunk = size_t{4} << 20;

}  // namespace

PrefetchResult PrefetchFiles(const std::vector<std::string>& paths, int64_t max_read,
                             const std::function<bool()>& cancelled) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  PrefetchResult result;
  std::vector<char> buffer(kChunk);
  int64_t charged = 0;  // missing bytes of the windows read, against `max_read`
  for (const std::string& path : paths) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ++result.missing;
      if (fd >= 0) ::close(fd);
      continue;
    }
    result.bytes += st.st_size;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    // Since Linux 5.1 mincore reports a file we may not write as all resident: read it all then.
    const bool visible = ResidencyVisible(path, st);
    // What was cached before, and after: the kernel's own readahead runs ahead of the windows,
    // so the difference, not the sum of what each window missed, is what this prefetch read.
    const int64_t before = visible ? ResidentBytes(fd, 0, st.st_size) : 0;
    int64_t attempted = 0;  // bytes of the windows read (when residency is hidden)
    for (int64_t offset = 0;
         offset < st.st_size && !result.cancelled && !result.truncated && result.error.empty();
         offset += kWindow) {
      if (cancelled && cancelled()) {
        result.cancelled = true;
        break;
      }
      const int64_t length = std::min(kWindow, st.st_size - offset);
      const int64_t missing = visible ? length - ResidentBytes(fd, offset, length) : length;
      if (missing == 0) continue;
      if (charged + missing > max_read) {
        result.truncated = true;
        break;
      }
      charged += missing;
      for (int64_t done = 0; done < length;) {
        const ssize_t n =
            ::pread(fd, buffer.data(),
                    static_cast<size_t>(std::min<int64_t>(kChunk, length - done)), offset + done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          result.error = path + ": " + (n < 0 ? std::strerror(errno) : "file shrank");
          break;
        }
        done += n;
      }
      attempted += length;
    }
    if (visible) {
      result.already += before;
      result.read += std::max<int64_t>(0, ResidentBytes(fd, 0, st.st_size) - before);
    } else {
      result.read += attempted;
    }
    ::close(fd);
    if (result.cancelled || result.truncated || !result.error.empty()) break;
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

FileCache DropFromPageCache(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // counted as missing below
    ::fdatasync(fd);       // dirty pages (a file just written) are not dropped
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  return FilesInPageCache(paths);
}

int64_t MemAvailableBytes() {
  std::istringstream meminfo(proc::ReadText("/proc/meminfo"));
  std::string key;
  int64_t kb = 0;
  while (meminfo >> key >> kb) {
    if (key == "MemAvailable:") return kb * 1024;
    meminfo.ignore(256, '\n');
  }
  return 0;
}

void PrefetchModelFiles(const ModelConfig& model, const std::function<bool()>& cancelled) {
  const std::vector<std::string> files = ModelFilesOf(model.argv);
  if (files.empty()) {
    spdlog::warn(
        "model {}: prefetch: true, but its cmd names no model file (-m, --model or a "
        "*.gguf word)",
        model.id);
    return;
  }
  const int64_t bound = std::max<int64_t>(0, MemAvailableBytes() - kPrefetchReserve);
  spdlog::info("model {}: prefetching {} model file(s) into the page cache (at most {})", model.id,
               files.size(), FormatBytes(static_cast<uint64_t>(bound)));
  const PrefetchResult result = PrefetchFiles(files, bound, cancelled);
  if (result.missing == static_cast<int>(files.size())) {
    spdlog::warn("model {}: prefetch: true, but no model file its cmd names exists", model.id);
    return;
  }
  spdlog::info("model {}: {}", model.id, DescribePrefetch(result));
}

std::string DescribePrefetch(const PrefetchResult& r) {
  std::string out = "prefetched " + FormatBytes(static_cast<uint64_t>(r.read)) + " of " +
                    FormatBytes(static_cast<uint64_t>(r.bytes)) + " (" +
                    FormatBytes(static_cast<uint64_t>(r.already)) + " were cached already) in ";
  char timing[64];
  std::snprintf(timing, sizeof timing, "%.2f s", r.seconds);
  out += timing;
  if (r.read > 0 && r.seconds > 0) {
    out +=
        ", " + FormatBytes(static_cast<uint64_t>(static_cast<double>(r.read) / r.seconds)) + "/s";
  }
  if (r.truncated) out += "; stopped: the rest does not fit in the memory available";
  if (r.cancelled) out += "; cancelled";
  if (!r.error.empty()) out += "; read error: " + r.error;
  if (r.missing > 0) out += "; " + std::to_string(r.missing) + " file(s) not found";
  return out;
}

}  // namespace swapd
