#include "backends/worker_threads.h"

#include <utility>

namespace swapd {

WorkerThreads::~WorkerThreads() { JoinAll(); }

void WorkerThreads::Run(std::function<void()> task) {
  std::vector<std::thread> done;
  {
    std::lock_guard lock(mu_);
    done.swap(finished_);
    const uint64_t id = next_id_++;
    // The thread cannot move itself to finished_ before this assignment: it needs mu_ for that.
    running_[id] = std::thread([this, id, task = std::move(task)]() mutable {
      task();
      task = nullptr;  // release what it captured before announcing the end
      std::lock_guard lock(mu_);
      finished_.push_back(std::move(running_.at(id)));
      running_.erase(id);
      finished_cv_.notify_all();
    });
  }
  for (std::thread& t : done) t.join();
}

void WorkerThreads::JoinAll() {
  std::unique_lock lock(mu_);
  for (;;) {
    std::vector<std::thread> done;
    done.swap(finished_);
    if (!done.empty()) {
      lock.unlock();
      for (std::thread& t : done) t.join();
      lock.lock();
      continue;
    }
    if (running_.empty()) return;
    finished_cv_.wait(lock, [&] { return !finished_.empty(); });
  }
}

}  // namespace swapd
