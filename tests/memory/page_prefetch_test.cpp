// Prefetch (memory/page_prefetch.h) against real files: a file pushed out of the page cache
// (fdatasync + POSIX_FADV_DONTNEED) is read back in, a cached one is skipped, the bound and a
// cancel stop it, missing files are counted.
#include "memory/page_prefetch.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "memory/memory_meter.h"
#include "tests/support/sizes.h"
#include "tests/support/temp_dir.h"

namespace swapd::testing {
namespace {

// Writes `mib` MiB to `path` and asks the kernel to drop its pages. False when they stay
// (a tmpfs keeps them: nothing to prefetch there).
bool WriteUncached(const std::string& path, int64_t mib) {
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  const std::string chunk(kMiB, 'w');
  for (int64_t i = 0; i < mib; ++i) {
    REQUIRE(::write(fd, chunk.data(), chunk.size()) == static_cast<ssize_t>(chunk.size()));
  }
  REQUIRE(::fdatasync(fd) == 0);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return FilesInPageCache({path}).cached < mib * kMiB / 2;
}

TEST_CASE("PrefetchFiles reads uncached files into the page cache and skips cached ones",
          "[unit][memory][prefetch]") {
  TempDir dir;
  const std::string model = dir.Path("model.gguf");
  const bool dropped = WriteUncached(model, 80);  // two 64 MiB windows

  PrefetchResult first = PrefetchFiles({model, dir.Path("absent.gguf")}, int64_t{1} << 40);
  INFO(DescribePrefetch(first));
  CHECK(first.bytes == 80 * kMiB);
  CHECK(first.missing == 1);
  CHECK_FALSE(first.truncated);
  CHECK_FALSE(first.cancelled);
  CHECK(first.error.empty());
  // What was read and what was cached before make up the file, less what the kernel may have
  // reclaimed meanwhile on a busy machine.
  CHECK(first.read + first.already <= 80 * kMiB);
  CHECK(first.read + first.already >= 64 * kMiB);
  if (dropped) {
    CHECK(first.read > 40 * kMiB);
  } else {
    WARN("the file system keeps written pages cached (tmpfs?): nothing was read from disk");
  }
  CHECK(FilesInPageCache({model}).cached >= 64 * kMiB);

  // (Nearly) everything is cached now: (nearly) nothing is read again.
  PrefetchResult second = PrefetchFiles({model}, int64_t{1} << 40);
  CHECK(second.read <= 16 * kMiB);
  CHECK(second.already >= 64 * kMiB);
  CHECK_THAT(DescribePrefetch(second), Catch::Contains(" of 80.0 MiB ("));
}

TEST_CASE("PrefetchFiles stops at its bound and when cancelled", "[unit][memory][prefetch]") {
  TempDir dir;
  const std::string model = dir.Path("model.gguf");
  if (!WriteUncached(model, 80)) {
    WARN("the file system keeps written pages cached (tmpfs?): the bound cannot be tested");
    CHECK(PrefetchFiles({model}, 0).already >= 64 * kMiB);
    return;
  }
  PrefetchResult bounded = PrefetchFiles({model}, 10 * kMiB);
  CHECK(bounded.truncated);
  CHECK(bounded.read <= 10 * kMiB);
  CHECK_THAT(DescribePrefetch(bounded), Catch::Contains("does not fit in the memory available"));

  // Cancelled after the first of three windows: the rest is not read (beyond the kernel's own
  // readahead).
  const std::string large = dir.Path("large.gguf");
  REQUIRE(WriteUncached(large, 192));
  int asked = 0;
  PrefetchResult cancelled = PrefetchFiles({large}, int64_t{1} << 40, [&] { return ++asked > 1; });
  CHECK(cancelled.cancelled);
  CHECK(cancelled.read >= 16 * kMiB);
  CHECK(cancelled.read < 160 * kMiB);
  CHECK(asked == 2);
}

TEST_CASE("MemAvailableBytes reads /proc/meminfo", "[unit][memory][prefetch]") {
  const int64_t available = MemAvailableBytes();
  CHECK(available > 0);
  CHECK(available < (int64_t{1} << 50));
}

}  // namespace
}  // namespace swapd::testing
