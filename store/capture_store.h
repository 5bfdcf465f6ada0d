// CaptureStore: the captures of recent requests (GET /api/captures/{id}), by activity row id, in
// memory, at most captureBuffer bytes together (BytesOf); the oldest go first to make room, and a
// capture bigger than the whole buffer is not kept. Not persisted: llama-swap's captures do not
// outlive the process either.
//
// How a capture gets its row's id: the proxy's record carries the capture (ProxyRecord::capture)
// to ActivityLog::Record, which queues it beside the row; the log's writer thread learns the row's
// id from the insert and adds the capture here under it, before the /api/events `activity` event
// of that row goes out (GET /api/metrics/activity may list the row a moment before: has_capture
// false until then). The request itself never waits for any of it.
//
// The captures' bytes are copied into one ring buffer, each contiguous, the oldest overwritten
// first; an entry per capture (in a deque, in id order: the ids only grow) says where its parts
// are. Holding each capture's own allocations instead (five or so, a few MiB of them at once, each
// freed long after it was made) made the allocator walk cold memory on every request: captures
// then cost a flood of small requests about 5 us of swapd's 40 us of CPU a request, 2 us since
// (bench/README.md). The ring is mapped from the system at the buffer's size, apart from malloc (a
// large block that malloc hands out and takes back raises its threshold for mapping, and the heap
// then keeps large request bodies after their requests: 13 MiB more after the proxy benchmark);
// its pages become resident as they are first written. A reload's new size lays it out again.
// Thread safe.
#pragma once

#include <array>
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

  // What `capture` takes here, counted against the capacity: its parts' bytes and its entry.
  static size_t BytesOf(const RequestCapture& capture);

  // False when it was not kept: captures are off, or it is bigger than the whole buffer. An id
  // not above every id held starts a new history (the store's ids began again): the captures of
  // that id and above go.
  bool Add(int64_t id, const RequestCapture& capture);
  // A copy of the capture; null when unknown or dropped.
  std::shared_ptr<const RequestCapture> Find(int64_t id) const;
  bool Has(int64_t id) const;

  size_t capacity() const;
  size_t bytes() const;
  size_t size() const;

  // A capture's parts, in the order the ring holds them.
  enum Part { kPath, kReqHeaders, kReqBody, kRespHeaders, kRespBody, kParts };

 private:
  struct Held {
    int64_t id = 0;
    size_t offset = 0;                   // of its first part in the ring
    std::array<size_t, kParts> lengths;  // its parts, one after the other
    unsigned present = 0;                // bit p: part p was kept (the optionals)
    size_t size() const;                 // of its parts together
  };

  // Anonymous memory of a given size, mapped and unmapped with the system's calls.
  class Mapping {
   public:
    Mapping() = default;
    explicit Mapping(size_t size);  // empty (data() null) for 0, or when the system refuses
    ~Mapping();
    Mapping(Mapping&& other) noexcept;
    Mapping& operator=(Mapping&& other) noexcept;
    char* data() const { return data_; }
    size_t size() const { return size_; }

   private:
    char* data_ = nullptr;
    size_t size_ = 0;
  };

  // The entry of `id`, or held_.end().
  std::deque<Held>::const_iterator FindLocked(int64_t id) const;
  // Where `n` more bytes go, the entries they overwrite dropped. mu_ held.
  size_t Place(size_t n);
  void DropOldest();  // mu_ held; held_ not empty

  mutable std::mutex mu_;
  // Written under mu_; read without it by capacity(), which every request's record asks.
  std::atomic<size_t> capacity_;
  Mapping ring_;     // Guarded by mu_ (all below); of capacity_ bytes
  size_t head_ = 0;  // where the next capture's bytes go
  size_t bytes_ = 0;
  std::deque<Held> held_;  // oldest (lowest id) first
};

}  // namespace swapd
