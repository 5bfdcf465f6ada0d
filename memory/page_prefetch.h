// Prefetch: reads a model's files into the page cache before its backend starts (`prefetch: true`),
// so that a model served from mmapped weights does not start at disk speed page by page. Reading
// is sequential, in 64 MiB windows; windows already resident (mincore) are skipped, and no more is
// read than the bound the caller gives (what the machine has available): prefetching must not push
// other models' files out of the cache. Thread safe (no state); a call blocks on disk I/O for as
// long as the reading takes, checking `cancelled` between windows.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config/config.h"
#include "memory/memory_meter.h"

namespace swapd {

struct PrefetchResult {
  int64_t bytes = 0;       // total size of the files found
  int64_t already = 0;     // of which already in the page cache (skipped)
  int64_t read = 0;        // read from disk now
  double seconds = 0;      // time the whole prefetch took
  int missing = 0;         // paths that could not be opened, or are not regular files
  bool cancelled = false;  // `cancelled` said stop before the end
  bool truncated = false;  // stopped at `max_read`, files not all in the cache
  std::string error;       // a read error, e.g. "/m.gguf: Input/output error"
};

// Reads `paths` into the page cache, at most `max_read` bytes that were not cached yet.
PrefetchResult PrefetchFiles(const std::vector<std::string>& paths, int64_t max_read,
                             const std::function<bool()>& cancelled = nullptr);

// The opposite, for measuring a cold start (`swapd bench --swap`): asks the kernel to drop `paths`
// from the page cache (fdatasync, then posix_fadvise DONTNEED over each whole file; needs no
// privilege). Pages that a process maps stay. Returns the files' residency after the drop.
FileCache DropFromPageCache(const std::vector<std::string>& paths);

// /proc/meminfo's MemAvailable in bytes; 0 when it cannot be read.
int64_t MemAvailableBytes();

// Memory left available when prefetching: what the bound keeps free.
inline constexpr int64_t kPrefetchReserve = int64_t{512} << 20;

// ProcessBackendOptions::prefetch: reads the model files `model`'s cmd names (ModelFilesOf) into
// the page cache, at most MemAvailable minus kPrefetchReserve, and logs what it did.
void PrefetchModelFiles(const ModelConfig& model, const std::function<bool()>& cancelled);

// "prefetched 1.2 GiB of 13.0 GiB (11.8 GiB were cached already) in 3.4 s, 361 MiB/s", plus what
// cut it short. For the log.
std::string DescribePrefetch(const PrefetchResult& result);

}  // namespace swapd
