// FanOut: one publisher's items sent to many readers, each with a bounded queue of its own: the
// mechanism under EventHub (/api/events, /models/sse) and LogHub (/logs/stream). An item is
// shared, never copied: it is made once, immutable, and queued by pointer for every reader that
// takes it. A reader takes the items its Filter admits (the publisher asks, per reader) and is
// neither queued nor woken for the others. A reader that does not keep up loses items, counted
// for it and in total, and never slows the publisher. A reader waits in poll with other things
// (a client's socket) on its WakeFd, which is signalled once per batch, not once per item. Close()
// at shutdown ends every reader's wait at once, for good.
// Thread safe. The owner may guard state of its own with the fan-out's lock (Lock(), and the
// hooks that run under it), so that what it keeps changes together with what it sends: EventHub's
// kept states, LogHub's history. The fan-out outlives its readers.
#pragma once

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "base/wake_fd.h"

namespace swapd {

template <typename T, typename Filter>
class FanOut {
 public:
  using Item = std::shared_ptr<const T>;
  using Held = std::unique_lock<std::mutex>;  // the fan-out's lock, held
  class Reader;

  // A reader's queue keeps at most `max_items` items and `max_bytes` bytes of them (as the
  // publisher counts them), whichever is reached first; what it starts with is not counted.
  explicit FanOut(size_t max_items, size_t max_bytes = SIZE_MAX)
      : max_items_(max_items), max_bytes_(max_bytes) {}
  FanOut(const FanOut&) = delete;
  FanOut& operator=(const FanOut&) = delete;

  [[nodiscard]] Held Lock() const { return Held(mu_); }

  // Queues `item`, `bytes` long, for every reader whose filter `takes(filter)` admits, and wakes
  // them. `held` is this fan-out's lock.
  template <typename Takes>
  void Publish(const Held& held, const Item& item, size_t bytes, const Takes& takes);
  template <typename Takes>
  void Publish(const Item& item, size_t bytes, const Takes& takes) {
    Publish(Lock(), item, bytes, takes);
  }

  // A new reader of what `filter` admits. `joining(filter, queue)` runs under the lock as it
  // joins: the items it puts in `queue` come first, before anything published later, and are not
  // counted against the bounds.
  template <typename Joining>
  std::unique_ptr<Reader> Subscribe(Filter filter, const Joining& joining);

  // Whether some reader's filter `takes`.
  template <typename Takes>
  bool AnyReader(const Held& held, const Takes& takes) const;
  template <typename Takes>
  bool AnyReader(const Takes& takes) const {
    return AnyReader(Lock(), takes);
  }

  // Every reader's wait ends at once, from now on (readers still get what is published).
  void Close();

  size_t readers() const {
    std::lock_guard lock(mu_);
    return readers_.size();
  }
  uint64_t dropped() const {  // items lost by slow readers, since the start
    std::lock_guard lock(mu_);
    return dropped_;
  }

 private:
  const size_t max_items_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::vector<Reader*> readers_;  // Guarded by mu_; each removes itself as it goes
  uint64_t dropped_ = 0;          // Guarded by mu_
  bool closed_ = false;           // Guarded by mu_
};

// One reader. Used by one thread at a time; leaves the fan-out when destroyed.
template <typename T, typename Filter>
class FanOut<T, Filter>::Reader {
 public:
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  struct Batch {
    std::vector<Item> items;
    uint64_t dropped = 0;  // lost since the last batch
  };
  // The items that arrived since the last call, waiting up to `timeout` for at least one (or a
  // loss). When the batch reports a loss, `after_loss(items)` runs under the fan-out's lock and
  // may add what brings the reader up to date again.
  Batch Next(std::chrono::milliseconds timeout) {
    return Next(timeout, [](std::vector<Item>&) {});
  }
  template <typename AfterLoss>
  Batch Next(std::chrono::milliseconds timeout, const AfterLoss& after_loss);

  // Readable while a batch (or a loss) waits, or once the fan-out closed: to wait for it with
  // other things, then take it with Next(0ms). -1 when there was no file descriptor left for it:
  // Next's timeout then is its only wake-up.
  int fd() const { return ready_.fd(); }
  const Filter& filter() const { return filter_; }

 private:
  friend class FanOut;
  Reader(FanOut* fan, Filter filter) : fan_(fan), filter_(std::move(filter)) {}

  FanOut* const fan_;  // not owned; outlives the reader
  const Filter filter_;
  // Guarded by fan_->mu_.
  std::vector<Item> pending_;
  size_t initial_ = 0;  // of `pending_`: what it started with, not counted against the bounds
  size_t bytes_ = 0;    // of the others
  uint64_t dropped_ = 0;
  WakeFd ready_;  // readable while something is pending (or lost, or the fan-out closed)
};

template <typename T, typename Filter>
template <typename Takes>
void FanOut<T, Filter>::Publish([[maybe_unused]] const Held& held, const Item& item, size_t bytes,
                                const Takes& takes) {
  assert(held.owns_lock() && held.mutex() == &mu_);
  for (Reader* r : readers_) {
    if (!takes(r->filter_)) continue;
    // Signalled once until the reader takes its batch: one wake per batch, not per item. A loss
    // wakes it too (its queue may be empty when an item alone passes the bound in bytes).
    r->ready_.Signal();
    if (r->pending_.size() >= max_items_ + r->initial_ || r->bytes_ + bytes > max_bytes_) {
      ++r->dropped_;
      ++dropped_;
      continue;
    }
    r->bytes_ += bytes;
    r->pending_.push_back(item);
  }
}

template <typename T, typename Filter>
template <typename Joining>
std::unique_ptr<typename FanOut<T, Filter>::Reader> FanOut<T, Filter>::Subscribe(
    Filter filter, const Joining& joining) {
  // Made before the lock: its eventfd is a system call the publisher need not wait for.
  std::unique_ptr<Reader> reader(new Reader(this, std::move(filter)));
  std::lock_guard lock(mu_);
  joining(reader->filter_, reader->pending_);
  reader->initial_ = reader->pending_.size();
  if (!reader->pending_.empty() || closed_) reader->ready_.Signal();
  readers_.push_back(reader.get());
  return reader;
}

template <typename T, typename Filter>
template <typename Takes>
bool FanOut<T, Filter>::AnyReader([[maybe_unused]] const Held& held, const Takes& takes) const {
  assert(held.owns_lock() && held.mutex() == &mu_);
  return std::any_of(readers_.begin(), readers_.end(),
                     [&](const Reader* r) { return takes(r->filter_); });
}

template <typename T, typename Filter>
void FanOut<T, Filter>::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  for (Reader* r : readers_) r->ready_.Signal();
}

template <typename T, typename Filter>
FanOut<T, Filter>::Reader::~Reader() {
  std::lock_guard lock(fan_->mu_);
  auto& readers = fan_->readers_;
  auto it = std::find(readers.begin(), readers.end(), this);
  if (it != readers.end()) readers.erase(it);  // (not there when its `joining` threw)
}

template <typename T, typename Filter>
template <typename AfterLoss>
typename FanOut<T, Filter>::Reader::Batch FanOut<T, Filter>::Reader::Next(
    std::chrono::milliseconds timeout, const AfterLoss& after_loss) {
  std::unique_lock lock(fan_->mu_);
  if (pending_.empty() && dropped_ == 0 && timeout.count() > 0) {
    lock.unlock();  // the Publish that makes `ready_` readable takes the lock
    WaitReadable(ready_.fd(), timeout);
    lock.lock();
  }
  if (!fan_->closed_) ready_.Clear();  // (closed: stays readable, every wait ends at once)
  Batch batch;
  batch.items.swap(pending_);
  initial_ = 0;
  bytes_ = 0;
  batch.dropped = dropped_;
  if (dropped_ > 0) {
    after_loss(batch.items);
    dropped_ = 0;
  }
  return batch;
}

}  // namespace swapd
