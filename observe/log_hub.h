// LogHub: the recent log lines of swapd itself and of every model's backend, for GET /logs and
// GET /logs/stream[/{model}]. Each line is tagged with its source ("swapd" or the model id). The
// history is bounded (max lines and max bytes, whichever is reached first; the oldest go first),
// and so is every live subscriber's queue: a subscriber that does not keep up loses lines, and is
// told how many with a "[swapd] ... N lines dropped" marker line. The live queues, losses and
// wake-ups are a FanOut's (observe/fan_out.h); the history, sources and marker are the hub's own.
// Thread safe. Append never blocks for long and never logs (it is called from an spdlog sink).
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "observe/fan_out.h"

namespace swapd {

struct LogLine {
  std::string source;  // "swapd" or a model id
  std::string text;    // without the '\n'
};

// "[source] text\n" for each line.
std::string FormatLogLines(const std::vector<LogLine>& lines);

struct LogHubLimits {
  size_t max_lines = 2000;
  size_t max_bytes = 1u << 20;  // of line text
  size_t subscriber_queue_lines = 1000;
};

class LogHub {
 public:
  static constexpr const char* kSwapdSource = "swapd";

  class Subscription;

  explicit LogHub(LogHubLimits limits = {});
  ~LogHub();

  void Append(std::string_view source, std::string_view text);

  // The history, oldest first; only the lines of `source` when it is not empty.
  std::vector<LogLine> History(const std::string& source = "") const;
  // The last `lines` lines of `source`, oldest first.
  std::vector<LogLine> Tail(const std::string& source, size_t lines) const;

  // Runs `use` with the whole history, oldest first, before any later line is appended or told
  // to the listener (a reader of both then misses nothing and sees nothing twice).
  void WithHistory(const std::function<void(const std::vector<LogLine>&)>& use) const;

  // Told of every line as it is appended, in order, under the hub's lock: it must be quick and
  // must not log. Replaces the previous listener.
  void SetListener(std::function<void(const LogLine&)> listener);

  // Live lines of `source` (all when empty), preceded by the matching history when
  // `with_history`. The subscription ends when the returned object is destroyed.
  std::unique_ptr<Subscription> Subscribe(const std::string& source, bool with_history);

  // Swapd is shutting down: every subscriber's wait ends at once, from now on (a stream then sees
  // the shutdown and ends). Lines are still appended.
  void Close();

 private:
  friend class Subscription;
  // A subscriber's filter is the source it takes; empty: every source.
  using Fan = FanOut<LogLine, std::string>;

  const LogHubLimits limits_;
  Fan fan_;  // the live subscribers and their queues; its lock guards the members below too
  std::deque<LogLine> history_;                   // Guarded by fan_'s lock
  size_t history_bytes_ = 0;                      // Guarded by fan_'s lock
  std::function<void(const LogLine&)> listener_;  // Guarded by fan_'s lock
};

// One live reader. Used by one thread at a time.
class LogHub::Subscription {
 public:
  ~Subscription();
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;

  // The lines that arrived since the last call (the history first), waiting up to `timeout` for
  // at least one. Empty when none came in time.
  std::vector<LogLine> Next(std::chrono::milliseconds timeout);
  // Readable while lines (or a loss) wait, or once the hub closed: to wait for them with other
  // things (RequestContext::WaitReadable), then take them with Next(0ms). -1 when swapd had no
  // file descriptor left for it: Next's timeout then is its only wake-up.
  int fd() const;

 private:
  friend class LogHub;
  explicit Subscription(std::unique_ptr<Fan::Reader> reader);

  std::unique_ptr<Fan::Reader> reader_;
};

}  // namespace swapd
