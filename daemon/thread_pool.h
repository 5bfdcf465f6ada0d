// GrowingThreadPool: the HTTP server's worker pool. cpp-httplib's default pool has a fixed number
// of threads, so a few long SSE streams would starve /health; this pool starts a new thread
// whenever no worker is idle (up to `max_threads`), and lets extra threads exit after they have
// been idle for a while. Thread safe.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

namespace swapd {

class GrowingThreadPool : public httplib::TaskQueue {
 public:
  GrowingThreadPool(size_t min_threads, size_t max_threads,
                    std::chrono::seconds idle_exit = std::chrono::seconds(30));
  ~GrowingThreadPool() override;

  void enqueue(std::function<void()> fn) override;
  // Runs what is queued, then joins every thread. Called by the server when it stops.
  void shutdown() override;

 private:
  void WorkerLoop(std::list<std::thread>::iterator self);
  void JoinFinishedLocked(std::unique_lock<std::mutex>& lock);

  const size_t min_threads_;
  const size_t max_threads_;
  const std::chrono::seconds idle_exit_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  // Guarded by mu_:
  std::deque<std::function<void()>> tasks_;
  std::list<std::thread> threads_;
  std::list<std::thread> finished_;
  size_t idle_ = 0;
  bool shutdown_ = false;
};

}  // namespace swapd
