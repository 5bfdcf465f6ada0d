#include "store/activity_log.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "base/thread_name.h"

namespace swapd {
namespace {

constexpr auto kWarnEvery = std::chrono::minutes(1);
// The newest rows are kept (max_rows): pruned after this many rows were written. (Pruning only in
// the lulls between requests, so that a flood paid for it after the flood, saved about 1.4 us of
// the writer's CPU a row, but deleting tens of thousands of rows at once left swapd holding more
// memory afterwards: 3.3 MiB more in use in one measurement.)
constexpr uint64_t kPruneEvery = 256;
// The rows that come within kGather of the first one waiting go in its transaction (up to
// kGatherRows of them). A writer that took what was there at once wrote a transaction per row or
// two under a flood of small requests, and each commit sends the pages it touched to the WAL again:
// 18 us of CPU per row, a quarter of swapd's CPU per proxied request (6.6 us with the wait;
// bench/README.md). The `activity` events come every 100 ms anyway; Flush() and the stop end the
// wait at once.
constexpr auto kGather = std::chrono::milliseconds(50);
constexpr size_t kGatherRows = 1000;

}  // namespace

std::unique_ptr<ActivityStore> OpenActivityStore(const std::string& path) {
  if (!path.empty()) {
    auto opened = ActivityStore::Open(path);
    if (opened.ok()) return std::move(opened).value();
    spdlog::warn("{}; the request history is kept in memory until swapd stops",
                 opened.status().message());
  }
  auto in_memory = ActivityStore::Open(":memory:");
  if (in_memory.ok()) return std::move(in_memory).value();
  spdlog::error("{}; swapd keeps no request history", in_memory.status().message());
  return nullptr;
}

ActivityEntry ActivityEntryOf(const ProxyRecord& record) {
  ActivityEntry e;
  e.timestamp = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  e.model = record.model_id;
  e.req_path = record.path;
  e.content_type = record.content_type;
  e.status = record.status;
  e.tokens.cache = record.usage.cached_tokens.value_or(0);
  e.tokens.input = record.usage.prompt_tokens.value_or(0);
  e.tokens.output = record.usage.completion_tokens.value_or(0);
  e.tokens.prompt_per_second = record.usage.prompt_per_second.value_or(0);
  e.tokens.tokens_per_second = record.usage.predicted_per_second.value_or(0);
  e.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(record.duration).count();
  e.error = record.error;
  return e;
}

std::string ActivityMetricsText(const ActivityLog& log) {
  return "# HELP swapd_activity_dropped_total Requests left out of the activity history: its "
         "queue was full.\n"
         "# TYPE swapd_activity_dropped_total counter\n"
         "swapd_activity_dropped_total " +
         std::to_string(log.dropped()) +
         "\n"
         "# HELP swapd_activity_write_failures_total Requests the activity history failed to "
         "write.\n"
         "# TYPE swapd_activity_write_failures_total counter\n"
         "swapd_activity_write_failures_total " +
         std::to_string(log.failed()) + "\n";
}

ActivityLog::ActivityLog(std::unique_ptr<ActivityStore> store,
                         std::function<void(int64_t id)> on_recorded, CaptureStore* captures,
                         int64_t max_rows)
    : store_(std::move(store)),
      on_recorded_(std::move(on_recorded)),
      captures_(captures),
      max_rows_(max_rows) {
  thread_ = std::thread([this] { Loop(); });
}

ActivityLog::~ActivityLog() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ActivityLog::Record(ActivityEntry entry, std::shared_ptr<const RequestCapture> capture) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= kQueue) {
      ++dropped_;
      return;
    }
    queue_.push_back(std::move(entry));
    // While the writer is behind (a slow disk), the captures waiting for their ids are bounded
    // by the buffer too: beyond it they would only push one another out.
    if (capture && captures_) {
      const size_t bytes = CaptureStore::BytesOf(*capture);
      if (queued_capture_bytes_ + bytes <= captures_->capacity()) {
        queued_capture_bytes_ += bytes;
      } else {
        capture = nullptr;
      }
    }
    queued_captures_.push_back(captures_ ? std::move(capture) : nullptr);
    ++queued_;
    // The writer waits for the first row, then for kGatherRows or the end of kGather: woken for
    // each row, it would cost a wake-up per request.
    if (queue_.size() != 1 && queue_.size() != kGatherRows) return;
  }
  wake_.notify_one();
}

void ActivityLog::Flush() {
  std::unique_lock lock(mu_);
  const uint64_t target = queued_;
  ++flushing_;
  wake_.notify_one();  // no gathering for it
  written_.wait(lock, [&] { return done_ >= target; });
  --flushing_;
}

uint64_t ActivityLog::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

uint64_t ActivityLog::failed() const {
  std::lock_guard lock(mu_);
  return failed_;
}

void ActivityLog::Loop() {
  NameThisThread("swapd-activity");
  std::chrono::steady_clock::time_point warned_at{};
  uint64_t since_prune = 0;
  // The batch's vectors trade places with the queue's, so that each keeps its capacity: a queue
  // grown again from nothing for every batch took a few reallocations of up to hundreds of KiB
  // each, on the requests' threads (and glibc consolidates its free lists for every large one).
  std::vector<ActivityEntry> batch;
  std::vector<std::shared_ptr<const RequestCapture>> captures;
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) break;  // stopping, and everything written
    wake_.wait_for(lock, kGather,
                   [&] { return stop_ || flushing_ > 0 || queue_.size() >= kGatherRows; });
    batch.swap(queue_);  // both emptied below, outside the lock
    captures.swap(queued_captures_);
    queued_capture_bytes_ = 0;
    lock.unlock();
    Result<std::vector<int64_t>> ids = store_->Insert(batch);
    Status pruned = Status::Ok();
    if (ids.ok() && (since_prune += batch.size()) >= std::min<uint64_t>(kPruneEvery, max_rows_)) {
      since_prune = 0;
      pruned = store_->Prune(max_rows_);
    }
    const Status& failure = ids.ok() ? pruned : ids.status();
    if (!failure.ok() && std::chrono::steady_clock::now() - warned_at >= kWarnEvery) {
      warned_at = std::chrono::steady_clock::now();
      spdlog::warn("{} (requests are served; the activity history misses them)", failure.message());
    }
    // Before the event: a reader that fetches the rows on it sees their has_capture.
    if (ids.ok() && captures_ && ids.value().size() == captures.size()) {
      for (size_t i = 0; i < captures.size(); ++i) {
        if (captures[i]) captures_->Add(ids.value()[i], *captures[i]);
      }
    }
    // One event per batch, the newest row's id: a reader refetches the history on it, and a
    // busy server's batches hold hundreds of rows (an event each would cost every reader a wake).
    if (ids.ok() && !ids.value().empty() && on_recorded_) on_recorded_(ids.value().back());
    const size_t written = batch.size();
    batch.clear();
    captures.clear();
    if (batch.capacity() > kGatherRows) {  // grown while the writer was behind: not kept
      batch = {};
      captures = {};
    }
    lock.lock();
    if (!ids.ok()) failed_ += written;
    done_ += written;
    written_.notify_all();
  }
}

}  // namespace swapd
