#include "observe/log_hub.h"

#include <algorithm>

#include "base/wake_fd.h"

namespace swapd {

// Guarded by the hub's mu_.
struct LogHub::Subscriber {
  std::string source;  // empty: every source
  std::vector<LogLine> pending;
  size_t dropped = 0;
  size_t history_lines = 0;  // of `pending`: the history, not counted against the live bound
  WakeFd ready;              // readable while lines (or a loss) wait, or once the hub closed
};

std::string FormatLogLines(const std::vector<LogLine>& lines) {
  std::string out;
  for (const LogLine& line : lines) {
    out += '[';
    out += line.source;
    out += "] ";
    out += line.text;
    out += '\n';
  }
  return out;
}

LogHub::LogHub(LogHubLimits limits) : limits_(limits) {}

LogHub::~LogHub() = default;

void LogHub::Append(std::string_view source, std::string_view text) {
  if (text.size() > limits_.max_bytes) text = text.substr(0, limits_.max_bytes);
  LogLine line{std::string(source), std::string(text)};
  std::lock_guard lock(mu_);
  for (const auto& s : subscribers_) {
    if (!s->source.empty() && s->source != line.source) continue;
    if (s->pending.size() >= limits_.subscriber_queue_lines + s->history_lines) {
      ++s->dropped;
      continue;
    }
    s->pending.push_back(line);
    s->ready.Signal();
  }
  if (listener_) listener_(line);
  history_bytes_ += line.text.size();
  history_.push_back(std::move(line));
  while (!history_.empty() &&
         (history_.size() > limits_.max_lines || history_bytes_ > limits_.max_bytes)) {
    history_bytes_ -= history_.front().text.size();
    history_.pop_front();
  }
}

std::vector<LogLine> LogHub::History(const std::string& source) const {
  std::lock_guard lock(mu_);
  std::vector<LogLine> out;
  for (const LogLine& line : history_) {
    if (source.empty() || line.source == source) out.push_back(line);
  }
  return out;
}

void LogHub::WithHistory(const std::function<void(const std::vector<LogLine>&)>& use) const {
  std::lock_guard lock(mu_);
  use(std::vector<LogLine>(history_.begin(), history_.end()));
}

void LogHub::SetListener(std::function<void(const LogLine&)> listener) {
  std::lock_guard lock(mu_);
  listener_ = std::move(listener);
}

std::vector<LogLine> LogHub::Tail(const std::string& source, size_t lines) const {
  std::lock_guard lock(mu_);
  std::vector<LogLine> out;
  for (auto it = history_.rbegin(); it != history_.rend() && out.size() < lines; ++it) {
    if (source.empty() || it->source == source) out.push_back(*it);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::unique_ptr<LogHub::Subscription> LogHub::Subscribe(const std::string& source,
                                                        bool with_history) {
  auto subscriber = std::make_shared<Subscriber>();
  subscriber->source = source;
  std::lock_guard lock(mu_);
  if (with_history) {
    // The history is bounded already: it does not count against the live queue's bound.
    for (const LogLine& line : history_) {
      if (source.empty() || line.source == source) subscriber->pending.push_back(line);
    }
    subscriber->history_lines = subscriber->pending.size();
  }
  if (!subscriber->pending.empty() || closed_) subscriber->ready.Signal();
  subscribers_.push_back(subscriber);
  return std::unique_ptr<Subscription>(new Subscription(this, std::move(subscriber)));
}

LogHub::Subscription::Subscription(LogHub* hub, std::shared_ptr<Subscriber> subscriber)
    : hub_(hub), subscriber_(std::move(subscriber)) {}

LogHub::Subscription::~Subscription() {
  std::lock_guard lock(hub_->mu_);
  hub_->subscribers_.remove(subscriber_);
}

void LogHub::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  for (const auto& s : subscribers_) s->ready.Signal();
}

int LogHub::Subscription::fd() const { return subscriber_->ready.fd(); }

std::vector<LogLine> LogHub::Subscription::Next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(hub_->mu_);
  Subscriber& s = *subscriber_;
  if (s.pending.empty() && s.dropped == 0 && timeout.count() > 0) {
    lock.unlock();  // the Append that makes `ready` readable takes the lock
    WaitReadable(s.ready.fd(), timeout);
    lock.lock();
  }
  if (!hub_->closed_) s.ready.Clear();  // (closed: stays readable, every wait ends at once)
  std::vector<LogLine> out;
  out.swap(s.pending);
  s.history_lines = 0;
  if (s.dropped > 0) {
    // The dropped lines came after the queued ones (the queue was full), so the marker goes last.
    out.push_back(LogLine{kSwapdSource, "... " + std::to_string(s.dropped) +
                                            " lines dropped (this log reader was too slow)"});
    s.dropped = 0;
  }
  return out;
}

}  // namespace swapd
