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
// Held in one deque in id order (the ids only grow), so that a capture costs no node of its own
// and Find is a binary search. Thread safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

#include "frontdoor/request_capture.h"

namespace swapd {

class CaptureStore {
 public:
  explicit CaptureStore(size_t capacity_bytes);

  // A reload's captureBuffer: a smaller one drops the oldest captures until the rest fit; 0 drops
  // them all and keeps none.
  void SetCapacity(size_t capacity_bytes);
  // What a capture takes here beside its own Bytes(): its entry.
  static constexpr size_t kEntryBytes = 32;

  // False when it was not kept: captures are off, or it is bigger than the whole buffer. An id
  // not above every id held starts a new history (the store's ids began again): the captures of
  // that id and above go.
  bool Add(int64_t id, std::shared_ptr<const RequestCapture> capture);
  // Null when unknown or dropped.
  std::shared_ptr<const RequestCapture> Find(int64_t id) const;
  bool Has(int64_t id) const;

  size_t capacity() const;
  size_t bytes() const;
  size_t size() const;

 private:
  struct Held {
    int64_t id = 0;
    std::shared_ptr<const RequestCapture> capture;
    size_t bytes = 0;  // with kEntryBytes
  };
  // The entry of `id`, or held_.end().
  std::deque<Held>::const_iterator FindLocked(int64_t id) const;
  // Drops the oldest until `bytes_ + room` fits in the capacity. Called with mu_ held.
  void MakeRoom(size_t room);

  mutable std::mutex mu_;
  // Written under mu_; read without it by capacity(), which every request's record asks.
  std::atomic<size_t> capacity_;
  size_t bytes_ = 0;       // Guarded by mu_
  std::deque<Held> held_;  // Guarded by mu_; oldest (lowest id) first
};

}  // namespace swapd
