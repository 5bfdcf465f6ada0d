#include "http/epoll_threads.h"

#include <sys/epoll.h>

#include <chrono>

#include "base/thread_name.h"

namespace swapd {
namespace {

// A thread that finished an event ends when this many others wait already (the pool grew while
// handlers blocked and they no longer do); an idle one after 30 rounds of 1 s.
constexpr int kSpareThreads = 2;
constexpr int kIdleRoundsBeforeExit = 30;
// How often the watchdog looks: often while no thread waits for events, seldom while some do. It
// never needs to be woken, so the hot path never wakes it.
constexpr auto kWatchdogTick = std::chrono::milliseconds(10);
constexpr auto kWatchdogCalmTick = std::chrono::milliseconds(200);

// Whether the calling thread said that it blocks while handling its current event.
thread_local bool blocking_now = false;

}  // namespace

EpollThreads::EpollThreads(int epoll_fd, uint64_t stop_id, size_t max_threads,
                           std::function<void(uint64_t)> on_event, std::function<void()> after_wait)
    : epoll_fd_(epoll_fd),
      stop_id_(stop_id),
      max_threads_(max_threads),
      on_event_(std::move(on_event)),
      after_wait_(std::move(after_wait)) {}

EpollThreads::~EpollThreads() {
  Stop();
  std::lock_guard lock(mu_);
  for (auto& t : finished_) t.join();
}

void EpollThreads::Run() {
  for (int i = 0; i < kInitialThreads; ++i) AddThread();
  std::thread watchdog([this] { Watchdog(); });
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return threads_.empty(); });
  for (auto& t : finished_) t.join();
  finished_.clear();
  lock.unlock();
  Stop();  // (already set: wakes the watchdog)
  watchdog.join();
}

void EpollThreads::Stop() {
  stopping_ = true;
  std::lock_guard lock(watch_mu_);
  watch_cv_.notify_all();
}

void EpollThreads::AddThread() {
  std::lock_guard lock(mu_);
  for (auto& t : finished_) t.join();
  finished_.clear();
  if (stopping_ || threads_.size() >= max_threads_) return;
  ++count_;
  threads_.emplace_back();
  auto self = std::prev(threads_.end());
  *self = std::thread([this, self] { ThreadMain(self); });
}

void EpollThreads::WillBlock() {
  if (blocking_now) return;  // said before, for this event
  blocking_now = true;
  // Every other thread waits for events or handles one it will soon be done with, unless it
  // blocks too.
  if (count_.load() - ++blocked_ <= 0) AddThread();
}

void EpollThreads::EndBlocking() {
  if (!blocking_now) return;
  blocking_now = false;
  --blocked_;
}

bool EpollThreads::LeavePool() {
  int count = count_.load();
  // Those blocked in their event (a stream, a wait for a model) do not count: the initial threads
  // stay for the others. Counting them, a serving thread left whenever two others waited, and the
  // watchdog started another once none did: with 50 streams open, 20 threads a second.
  while (count - blocked_.load() > kInitialThreads) {
    if (count_.compare_exchange_weak(count, count - 1)) return true;
  }
  return false;
}

void EpollThreads::ThreadMain(std::list<std::thread>::iterator self) {
  NameThisThread("swapd-http");
  int idle_rounds = 0;
  bool left = false;  // counted out by LeavePool
  while (!stopping_) {
    epoll_event ev{};
    ++waiting_;
    const int n = epoll_wait(epoll_fd_, &ev, 1, 1000);
    const int still_waiting = --waiting_;
    if (stopping_ || (n == 1 && ev.data.u64 == stop_id_)) break;
    after_wait_();
    EndBlocking();  // (after_wait_ may have blocked)
    if (n <= 0) {
      if (n == 0 && ++idle_rounds >= kIdleRoundsBeforeExit && still_waiting >= kSpareThreads &&
          (left = LeavePool())) {
        break;
      }
      continue;
    }
    idle_rounds = 0;
    events_.fetch_add(1, std::memory_order_relaxed);
    on_event_(ev.data.u64);
    EndBlocking();
    // The pool grew while handlers blocked; enough threads wait again.
    if (waiting_.load(std::memory_order_relaxed) >= kSpareThreads && (left = LeavePool())) break;
  }
  EndBlocking();
  if (!left) --count_;
  std::lock_guard lock(mu_);
  finished_.splice(finished_.end(), threads_, self);
  cv_.notify_all();
}

void EpollThreads::Watchdog() {
  uint64_t seen = events_.load();
  bool calm = true;
  std::unique_lock lock(watch_mu_);
  while (!stopping_) {
    watch_cv_.wait_for(lock, calm ? kWatchdogCalmTick : kWatchdogTick,
                       [&] { return stopping_.load(); });
    if (stopping_) break;
    const uint64_t now = events_.load();
    calm = waiting_.load() > 0;
    if (!calm && now == seen) {
      // Nobody waits, and no thread took an event since the last look: all are stuck.
      lock.unlock();
      AddThread();
      lock.lock();
    }
    seen = now;
  }
}

}  // namespace swapd
