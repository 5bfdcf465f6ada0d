#include "daemon/idle_trim.h"

#include <malloc.h>
#include <unistd.h>

#include <fstream>

namespace swapd {

IdleTrim::IdleTrim(std::function<uint64_t()> activity, std::chrono::milliseconds quiet,
                   std::function<void(uint64_t, uint64_t)> on_trim)
    : activity_(std::move(activity)), quiet_(quiet), on_trim_(std::move(on_trim)) {
  thread_ = std::thread([this] { Loop(); });
}

IdleTrim::~IdleTrim() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void IdleTrim::Loop() {
  uint64_t seen = activity_();
  bool busy = false;  // requests came since the last trim
  std::unique_lock lock(mu_);
  while (!wake_.wait_for(lock, quiet_, [this] { return stop_; })) {
    const uint64_t now = activity_();
    if (now != seen) {
      seen = now;
      busy = true;
      continue;
    }
    if (!busy) continue;
    busy = false;
    lock.unlock();
    const uint64_t before = ResidentBytes();
    malloc_trim(0);
    if (on_trim_) on_trim_(before, ResidentBytes());
    lock.lock();
  }
}

uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace swapd
