// EpollThreads: the threads that take turns waiting on one epoll set; the thread that wakes for
// an event handles it itself (no hand-off). The pool is kept small: a thread that finishes an
// event usually finds the next one ready and goes on without sleeping, where many waiting
// threads would each be woken, cold, for one event. It grows only for threads that block:
//  - said: a thread about to block until the end of its event calls WillBlock(), which starts
//    another unless some thread still waits or handles an event without blocking;
//  - unsaid (a slow client, a long computation): a watchdog adds a thread when none waits and
//    none has taken an event since its last look.
// The threads added end once enough others wait again. Thread safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

namespace swapd {

class EpollThreads {
 public:
  // Threads that wait on the epoll set while no handler blocks (bench/README.md).
  static constexpr int kInitialThreads = 4;

  // `on_event` handles one event (its data.u64); `after_wait` runs after every return from
  // epoll_wait, also when it timed out (at least once a second). An event with `stop_id` ends
  // the thread that takes it; it should stay readable (level-triggered) so that each sees it.
  EpollThreads(int epoll_fd, uint64_t stop_id, size_t max_threads,
               std::function<void(uint64_t)> on_event, std::function<void()> after_wait);
  ~EpollThreads();
  EpollThreads(const EpollThreads&) = delete;
  EpollThreads& operator=(const EpollThreads&) = delete;

  // Starts the threads; returns once Stop() was called and every thread has ended.
  void Run();
  // Threads end after their current event, or once they see the stop event.
  void Stop();
  // Threads running now (started and not counted out).
  int size() const { return count_.load(); }

  // Called on a thread of this pool that is about to block until the end of its event.
  void WillBlock();

 private:
  void ThreadMain(std::list<std::thread>::iterator self);
  // Starts one more thread unless at max_threads or stopping.
  void AddThread();
  // The calling thread's event is over: it no longer counts as blocked.
  void EndBlocking();
  // Whether the calling thread may end (more than the initial threads run); if so it is counted
  // out.
  bool LeavePool();
  void Watchdog();

  const int epoll_fd_;
  const uint64_t stop_id_;
  const size_t max_threads_;
  const std::function<void(uint64_t)> on_event_;
  const std::function<void()> after_wait_;

  std::atomic<bool> stopping_{false};
  std::atomic<int> waiting_{0};      // threads in epoll_wait
  std::atomic<int> count_{0};        // threads running
  std::atomic<int> blocked_{0};      // threads that said they block until their event ends
  std::atomic<uint64_t> events_{0};  // taken from the epoll set so far

  std::mutex watch_mu_;
  std::condition_variable watch_cv_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::list<std::thread> threads_;   // guarded by mu_
  std::list<std::thread> finished_;  // guarded by mu_: ended, not yet joined
};

}  // namespace swapd
