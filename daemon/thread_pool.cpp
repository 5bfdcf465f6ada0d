#include "daemon/thread_pool.h"

namespace swapd {

GrowingThreadPool::GrowingThreadPool(size_t min_threads, size_t max_threads,
                                     std::chrono::seconds idle_exit)
    : min_threads_(min_threads), max_threads_(max_threads), idle_exit_(idle_exit) {}

GrowingThreadPool::~GrowingThreadPool() { shutdown(); }

void GrowingThreadPool::enqueue(std::function<void()> fn) {
  std::unique_lock lock(mu_);
  if (shutdown_) return;
  JoinFinishedLocked(lock);
  tasks_.push_back(std::move(fn));
  if (idle_ < tasks_.size() && threads_.size() < max_threads_) {
    threads_.emplace_back();
    auto self = std::prev(threads_.end());
    *self = std::thread([this, self] { WorkerLoop(self); });
  } else {
    cv_.notify_one();
  }
}

void GrowingThreadPool::WorkerLoop(std::list<std::thread>::iterator self) {
  std::unique_lock lock(mu_);
  for (;;) {
    if (tasks_.empty()) {
      if (shutdown_) break;
      ++idle_;
      bool woke = cv_.wait_for(lock, idle_exit_, [this] { return shutdown_ || !tasks_.empty(); });
      --idle_;
      // An extra thread that stayed idle leaves; the pool keeps min_threads_.
      if (!woke && threads_.size() > min_threads_) break;
      continue;
    }
    auto task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
  // Hand our std::thread to finished_ so that someone else joins it.
  finished_.splice(finished_.end(), threads_, self);
  cv_.notify_all();
}

void GrowingThreadPool::JoinFinishedLocked(std::unique_lock<std::mutex>& lock) {
  if (finished_.empty()) return;
  std::list<std::thread> done;
  done.swap(finished_);
  lock.unlock();
  for (auto& t : done) t.join();
  lock.lock();
}

void GrowingThreadPool::shutdown() {
  std::unique_lock lock(mu_);
  shutdown_ = true;
  cv_.notify_all();
  cv_.wait(lock, [this] { return threads_.empty(); });
  JoinFinishedLocked(lock);
}

}  // namespace swapd
