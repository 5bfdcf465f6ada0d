// CaptureStore: the captures of recent requests (GET /api/captures/{id}), by activity row id, in
// memory, at most captureBuffer bytes together (RequestCapture::Bytes); the oldest go first to
// make room, and a capture bigger than the whole buffer is not kept. Not persisted: llama-swap's
// captures do not outlive the process either.
//
// How a capture gets its row's id: the proxy's record carries the capture (ProxyRecord::capture)
// to ActivityLog::Record, which queues it beside the row; the log's writer thread learns the row's
// id from the insert and adds the capture here under it, before the /api/events `activity` event
// of that row goes out (GET /api/metrics/activity may list the row a moment before: has_capture
// false until then). The request itself never waits for any of it.
//
// Thread safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "frontdoor/request_capture.h"

namespace swapd {

class CaptureStore {
 public:
  explicit CaptureStore(size_t capacity_bytes);

  // A reload's captureBuffer: a smaller one drops the oldest captures until the rest fit; 0 drops
  // them all and keeps none.
  void SetCapacity(size_t capacity_bytes);
  // False when it was not kept: captures are off, or it is bigger than the whole buffer.
  bool Add(int64_t id, std::shared_ptr<const RequestCapture> capture);
  // Null when unknown or dropped.
  std::shared_ptr<const RequestCapture> Find(int64_t id) const;
  bool Has(int64_t id) const;

  size_t capacity() const;
  size_t bytes() const;
  size_t size() const;

 private:
  struct Held {
    std::shared_ptr<const RequestCapture> capture;
    size_t bytes = 0;
  };
  // Drops the oldest until `bytes_ + room` fits in the capacity. Called with mu_ held.
  void MakeRoom(size_t room);

  mutable std::mutex mu_;
  size_t capacity_;                         // Guarded by mu_
  size_t bytes_ = 0;                        // Guarded by mu_
  std::unordered_map<int64_t, Held> held_;  // Guarded by mu_
  std::deque<int64_t> order_;               // Guarded by mu_; ids, oldest first
};

}  // namespace swapd
