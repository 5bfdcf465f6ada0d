#include "observe/log_hub.h"

#include <algorithm>

namespace swapd {

namespace {

// Whether a subscriber of `wanted` (empty: every source) takes a line of `source`.
bool Takes(const std::string& wanted, const std::string& source) {
  return wanted.empty() || wanted == source;
}

}  // namespace

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

// The live queues are bounded in lines only: the lines' bytes are bounded by the history's limit.
LogHub::LogHub(LogHubLimits limits) : limits_(limits), fan_(limits.subscriber_queue_lines) {}

LogHub::~LogHub() = default;

void LogHub::Append(std::string_view source, std::string_view text) {
  if (text.size() > limits_.max_bytes) text = text.substr(0, limits_.max_bytes);
  LogLine line{std::string(source), std::string(text)};
  const auto takes = [&line](const std::string& wanted) { return Takes(wanted, line.source); };
  Fan::Held held = fan_.Lock();
  // One copy shared by the subscribers that take it (it was one each), and none for a line that
  // nobody streams: that costs what it did.
  if (fan_.AnyReader(held, takes)) {
    fan_.Publish(held, std::make_shared<const LogLine>(line), 0, takes);
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
  Fan::Held held = fan_.Lock();
  std::vector<LogLine> out;
  for (const LogLine& line : history_) {
    if (source.empty() || line.source == source) out.push_back(line);
  }
  return out;
}

void LogHub::WithHistory(const std::function<void(const std::vector<LogLine>&)>& use) const {
  Fan::Held held = fan_.Lock();
  use(std::vector<LogLine>(history_.begin(), history_.end()));
}

void LogHub::SetListener(std::function<void(const LogLine&)> listener) {
  Fan::Held held = fan_.Lock();
  listener_ = std::move(listener);
}

std::vector<LogLine> LogHub::Tail(const std::string& source, size_t lines) const {
  Fan::Held held = fan_.Lock();
  std::vector<LogLine> out;
  for (auto it = history_.rbegin(); it != history_.rend() && out.size() < lines; ++it) {
    if (source.empty() || it->source == source) out.push_back(*it);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::unique_ptr<LogHub::Subscription> LogHub::Subscribe(const std::string& source,
                                                        bool with_history) {
  std::unique_ptr<Fan::Reader> reader =
      fan_.Subscribe(source, [&](const std::string& wanted, std::vector<Fan::Item>& queue) {
        if (!with_history) return;
        // The history is bounded already: it does not count against the live queue's bound.
        for (const LogLine& line : history_) {
          if (Takes(wanted, line.source)) queue.push_back(std::make_shared<const LogLine>(line));
        }
      });
  return std::unique_ptr<Subscription>(new Subscription(std::move(reader)));
}

void LogHub::Close() { fan_.Close(); }

LogHub::Subscription::Subscription(std::unique_ptr<Fan::Reader> reader)
    : reader_(std::move(reader)) {}

LogHub::Subscription::~Subscription() = default;

int LogHub::Subscription::fd() const { return reader_->fd(); }

std::vector<LogLine> LogHub::Subscription::Next(std::chrono::milliseconds timeout) {
  Fan::Reader::Batch batch = reader_->Next(timeout);
  std::vector<LogLine> out;
  out.reserve(batch.items.size() + 1);
  for (const Fan::Item& line : batch.items) out.push_back(*line);
  if (batch.dropped > 0) {
    // The dropped lines came after the queued ones (the queue was full), so the marker goes last.
    out.push_back(LogLine{kSwapdSource, "... " + std::to_string(batch.dropped) +
                                            " lines dropped (this log reader was too slow)"});
  }
  return out;
}

}  // namespace swapd
