// WorkerThreads: runs each task on a thread of its own, for the Router's blocking Backend calls
// (Start can take minutes, and a Stop may have to cancel a Start on the same backend, so the calls
// cannot share one thread). Threads that finished are joined when the next task starts, so a
// long-running daemon does not accumulate them; JoinAll waits for the rest.
// Thread safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace swapd {

class WorkerThreads {
 public:
  WorkerThreads() = default;
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;
  ~WorkerThreads();  // JoinAll()

  // Starts `task` on a new thread. May be called while holding a lock that the task never
  // takes after it returns (joining a finished thread does not wait for anything else).
  void Run(std::function<void()> task);

  // Blocks until every task (also those started meanwhile) returned, and joins their threads.
  void JoinAll();

 private:
  std::mutex mu_;
  std::condition_variable finished_cv_;
  std::map<uint64_t, std::thread> running_;  // Guarded by mu_
  std::vector<std::thread> finished_;        // Guarded by mu_: returned, not joined yet
  uint64_t next_id_ = 0;                     // Guarded by mu_
};

}  // namespace swapd
