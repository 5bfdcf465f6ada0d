#include "backends/output_monitor.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kLinger = std::chrono::seconds(2);  // reading after the exit, at most
constexpr size_t kReadChunk = 64 * 1024;
// After CoalesceReads(), while the child writes little, its output is read at most once per
// kCoalesce: a ready backend that logs a line per request (llama-server does) would otherwise wake
// this thread for every request. The first output after a quiet spell is still read at once, and
// a read of kFlood bytes or more is followed by the next at once, so the pipe (64 KiB) never
// fills because of the pause.
constexpr auto kCoalesce = std::chrono::milliseconds(10);
constexpr size_t kFlood = 8 * 1024;

}  // namespace

struct OutputMonitor::Shared {
  std::shared_ptr<ChildProcess> child;
  int wake_fd = -1;  // eventfd written by Finish()
  LineSplitter splitter;
  std::function<void()> on_output;
  std::function<void()> on_exit;
  std::atomic<bool> coalesce{false};  // CoalesceReads() was called

  Shared(std::shared_ptr<ChildProcess> c, LineSplitter::LineFn on_line)
      : child(std::move(c)), splitter(std::move(on_line)) {
    wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  }
  ~Shared() {
    if (wake_fd >= 0) ::close(wake_fd);
  }

  // Reads what the pipe has now, up to `max_bytes`, counting them in `*read_bytes` (if given).
  // Returns false at EOF (or a read error).
  bool Drain(size_t max_bytes, size_t* read_bytes = nullptr) {
    char buf[kReadChunk];
    size_t unused = 0;
    size_t& total = read_bytes != nullptr ? *read_bytes : unused;
    total = 0;
    while (total < max_bytes) {
      ssize_t n = ::read(child->output_fd(), buf, sizeof(buf));
      if (n > 0) {
        splitter.Feed(std::string_view(buf, static_cast<size_t>(n)));
        total += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
    return true;
  }

  void Run() {
    bool out_open = true;
    bool exited = false;
    bool woken = false;
    Clock::time_point linger_until;
    Clock::time_point next_read;  // output is not read before this (kCoalesce)
    for (;;) {
      const Clock::time_point now = Clock::now();
      if (exited && (!out_open || woken || now >= linger_until)) break;
      const bool out_resting =
          out_open && !exited && coalesce.load(std::memory_order_relaxed) && now < next_read;
      struct pollfd fds[3];
      int nfds = 0;
      int out_i = -1, exit_i = -1, wake_i = -1;
      if (out_open && !out_resting) out_i = nfds, fds[nfds++] = {child->output_fd(), POLLIN, 0};
      if (!exited) exit_i = nfds, fds[nfds++] = {child->exit_fd(), POLLIN, 0};
      if (!woken) wake_i = nfds, fds[nfds++] = {wake_fd, POLLIN, 0};
      int timeout = -1;
      if (exited || out_resting) {
        auto left =
            std::chrono::ceil<std::chrono::milliseconds>((exited ? linger_until : next_read) - now);
        timeout = static_cast<int>(std::max<long>(0, left.count()));
      }
      if (::poll(fds, static_cast<nfds_t>(nfds), timeout) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if (out_i >= 0 && fds[out_i].revents != 0) {
        size_t bytes = 0;
        out_open = Drain(1 << 20, &bytes);  // bounded, so an exit is not starved by a flood
        if (!exited && on_output) on_output();
        if (bytes < kFlood) next_read = Clock::now() + kCoalesce;
      }
      if (exit_i >= 0 && fds[exit_i].revents != 0) {
        // Its last words are in the pipe already: read them before reporting.
        if (out_open) out_open = Drain(8 << 20);
        splitter.Flush();
        exited = true;
        linger_until = Clock::now() + kLinger;
        if (on_exit) on_exit();
        on_exit = nullptr;
        on_output = nullptr;
      }
      if (wake_i >= 0 && fds[wake_i].revents != 0) woken = true;
    }
    if (out_open) Drain(1 << 20);
    splitter.Flush();
  }
};

void OutputMonitor::CoalesceReads() { shared_->coalesce.store(true, std::memory_order_relaxed); }

OutputMonitor::OutputMonitor(std::shared_ptr<ChildProcess> child, LineSplitter::LineFn on_line,
                             std::function<void()> on_output, std::function<void()> on_exit,
                             LineSplitter::LineFn on_partial)
    : shared_(std::make_shared<Shared>(std::move(child), std::move(on_line))) {
  if (on_partial) shared_->splitter.SetPartialFn(std::move(on_partial));
  shared_->on_output = std::move(on_output);
  shared_->on_exit = std::move(on_exit);
  std::shared_ptr<Shared> shared = shared_;
  thread_ = std::thread([shared] { shared->Run(); });
}

OutputMonitor::~OutputMonitor() { Finish(); }

void OutputMonitor::Finish() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  ssize_t ignored = ::write(shared_->wake_fd, &one, sizeof(one));
  (void)ignored;
  if (thread_.get_id() == std::this_thread::get_id()) {
    thread_.detach();  // called from on_exit: the thread holds `shared` and ends by itself
  } else {
    thread_.join();
  }
}

}  // namespace swapd
