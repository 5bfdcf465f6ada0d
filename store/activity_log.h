// ActivityLog: records each request in the ActivityStore without holding the request up. Record()
// only queues (at most kQueue entries; beyond that, as when the disk is slower than the requests,
// entries are dropped and counted). One thread writes what is queued in one transaction (what
// comes within 50 ms of the first waiting row, up to 1000 rows), keeps the newest kMaxRows rows,
// and tells `on_recorded` the newest row's id of each transaction (the /api/events `activity`
// event: rows written together are told once). A write that fails (disk full, a locked or broken
// database) is logged at most once a minute and counted; the requests were served all the same. A
// request's capture (ProxyRecord::capture) goes into the CaptureStore under its row's id once the
// row is written (see store/capture_store.h).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "frontdoor/upstream_proxy.h"
#include "store/activity_store.h"
#include "store/capture_store.h"

namespace swapd {

// The store at `path` (store.path), or, when there is none ("") or it cannot be opened (logged),
// one in memory: the history then lasts until swapd stops. Null only when even that fails.
std::unique_ptr<ActivityStore> OpenActivityStore(const std::string& path);

// The row of one request's record.
ActivityEntry ActivityEntryOf(const ProxyRecord& record);

class ActivityLog;

// Its Prometheus lines: swapd_activity_dropped_total, swapd_activity_write_failures_total.
std::string ActivityMetricsText(const ActivityLog& log);

class ActivityLog {
 public:
  static constexpr size_t kQueue = 10000;
  static constexpr int64_t kMaxRows = 100000;

  // `captures` (may be null: none are kept) must outlive the log. `max_rows`: the rows kept.
  ActivityLog(std::unique_ptr<ActivityStore> store, std::function<void(int64_t id)> on_recorded,
              CaptureStore* captures = nullptr, int64_t max_rows = kMaxRows);
  ~ActivityLog();  // writes what is queued, then stops
  ActivityLog(const ActivityLog&) = delete;
  ActivityLog& operator=(const ActivityLog&) = delete;

  void Record(ActivityEntry entry, std::shared_ptr<const RequestCapture> capture = nullptr);
  // Blocks until every entry recorded before the call was written (or failed to be).
  void Flush();

  // Queries run on the caller's thread.
  ActivityStore& store() { return *store_; }
  uint64_t dropped() const;
  uint64_t failed() const;

 private:
  void Loop();

  const std::unique_ptr<ActivityStore> store_;
  const std::function<void(int64_t)> on_recorded_;
  CaptureStore* const captures_;
  const int64_t max_rows_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable written_;
  std::vector<ActivityEntry> queue_;  // Guarded by mu_
  // Guarded by mu_; beside queue_, one each (null: no capture).
  std::vector<std::shared_ptr<const RequestCapture>> queued_captures_;
  size_t queued_capture_bytes_ = 0;  // Guarded by mu_; of those captures
  uint64_t queued_ = 0;              // Guarded by mu_; ever queued
  uint64_t done_ = 0;                // Guarded by mu_; of those, written or failed
  uint64_t dropped_ = 0;             // Guarded by mu_
  uint64_t failed_ = 0;              // Guarded by mu_; entries whose write failed
  bool stop_ = false;                // Guarded by mu_
  int flushing_ = 0;                 // Guarded by mu_; Flush() calls waiting
  std::thread thread_;
};

}  // namespace swapd
