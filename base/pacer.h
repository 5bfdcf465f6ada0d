// Pacer: runs a flush on a thread of its own, only after Poke() said something is due and at most
// once per interval: a poke within the interval of the last flush waits for the rest of it, so a
// burst of changes becomes one flush. The /api/events sources that batch (in-flight changes, log
// lines) use it. Thread safe. The flush runs on the pacer's thread without the pacer's lock held,
// so it may take its owner's lock, and the owner may Poke() under that lock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace swapd {

class Pacer {
 public:
  using Clock = std::chrono::steady_clock;

  Pacer(std::chrono::milliseconds every, std::function<void()> flush);
  ~Pacer();  // Stop()
  Pacer(const Pacer&) = delete;
  Pacer& operator=(const Pacer&) = delete;

  // Something is due: a flush follows within the interval.
  void Poke();
  // Ends the thread (a due flush is not run) and waits for a flush under way; later pokes do
  // nothing. Not from within the flush.
  void Stop();

 private:
  void Run();

  const std::chrono::milliseconds every_;
  const std::function<void()> flush_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool due_ = false;                          // Guarded by mu_
  bool stop_ = false;                         // Guarded by mu_
  Clock::time_point flushed_ = Clock::now();  // Guarded by mu_; when the last flush began
  std::thread thread_;
};

}  // namespace swapd
