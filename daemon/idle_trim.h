// IdleTrim: gives the memory a flood of requests left free back to the system once the requests
// stop. glibc's malloc keeps what its arenas freed (each serving thread has its own) for the next
// allocation; after a burst of a few thousand requests that is tens of MiB of resident memory
// nothing uses. When `activity` (a count that grows with each request) has grown and then stood
// still for one `quiet` period, malloc_trim(0) returns the free pages of every arena; a server
// that stays busy or idle is never trimmed. One thread, asleep between looks. Thread safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace swapd {

class IdleTrim {
 public:
  // `on_trim` (may be empty) is told each trim, with the resident bytes before and after.
  IdleTrim(std::function<uint64_t()> activity, std::chrono::milliseconds quiet,
           std::function<void(uint64_t before, uint64_t after)> on_trim = {});
  ~IdleTrim();  // stops the thread
  IdleTrim(const IdleTrim&) = delete;
  IdleTrim& operator=(const IdleTrim&) = delete;

 private:
  void Loop();

  const std::function<uint64_t()> activity_;
  const std::chrono::milliseconds quiet_;
  const std::function<void(uint64_t, uint64_t)> on_trim_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

// This process's resident memory in bytes (/proc/self/statm); 0 when unknown.
uint64_t ResidentBytes();

}  // namespace swapd
