// OutputMonitor: the one thread that watches a running child: it reads the child's stdout+stderr
// pipe continuously (a backend must never block on a full pipe) and passes whole lines on, and it
// notices the child's exit at once (pidfd readable) and reports it. After the exit it keeps reading
// only until EOF, Finish(), or a short linger: a grandchild that escaped the process group may hold
// the pipe open forever, and nothing waits on it.
// Thread safe. The callbacks run on the monitor thread. `on_output` and `on_exit` are not called
// after on_exit has returned, so their captures need only live that long; `on_line` may be called
// until Finish() returns.
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <thread>

#include "backends/child_process.h"
#include "backends/log_ring.h"

namespace swapd {

class OutputMonitor {
 public:
  // `on_line`: each output line. `on_output`: new output arrived while the child runs (may be
  // frequent). `on_exit`: once, when the child has exited (not reaped: on_exit usually reaps it).
  // `on_partial` (may be null): the line being written, not ended yet, after each read that
  // leaves one (LineSplitter::SetPartialFn); called like `on_line`.
  OutputMonitor(std::shared_ptr<ChildProcess> child, LineSplitter::LineFn on_line,
                std::function<void()> on_output, std::function<void()> on_exit,
                LineSplitter::LineFn on_partial = nullptr);
  ~OutputMonitor();  // Finish()
  OutputMonitor(const OutputMonitor&) = delete;
  OutputMonitor& operator=(const OutputMonitor&) = delete;

  // Call once the child has exited and on_exit has run (or is running on this very thread): the
  // thread drains what is buffered and ends; this joins it. Called on the monitor thread itself
  // (from inside on_exit), it detaches instead; the thread keeps what it needs alive.
  void Finish();

  // From now on, while the child writes little, its output is read at most every 10 ms instead
  // of as each line arrives (fewer wake-ups when a ready backend logs a line per request). Call
  // once nothing waits on output any more (readiness); a flood is still read at once.
  void CoalesceReads();

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace swapd
