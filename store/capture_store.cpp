#include "store/capture_store.h"

#include <algorithm>

namespace swapd {

CaptureStore::CaptureStore(size_t capacity_bytes) : capacity_(capacity_bytes) {}

void CaptureStore::SetCapacity(size_t capacity_bytes) {
  std::lock_guard lock(mu_);
  capacity_ = capacity_bytes;
  MakeRoom(0);
}

bool CaptureStore::Add(int64_t id, std::shared_ptr<const RequestCapture> capture) {
  if (!capture) return false;
  const size_t bytes = capture->Bytes() + kEntryBytes;
  std::lock_guard lock(mu_);
  if (bytes > capacity_) return false;
  while (!held_.empty() && held_.back().id >= id) {  // a new history
    bytes_ -= held_.back().bytes;
    held_.pop_back();
  }
  MakeRoom(bytes);
  held_.push_back(Held{id, std::move(capture), bytes});
  bytes_ += bytes;
  return true;
}

std::deque<CaptureStore::Held>::const_iterator CaptureStore::FindLocked(int64_t id) const {
  auto it = std::lower_bound(held_.begin(), held_.end(), id,
                             [](const Held& h, int64_t wanted) { return h.id < wanted; });
  return it != held_.end() && it->id == id ? it : held_.end();
}

std::shared_ptr<const RequestCapture> CaptureStore::Find(int64_t id) const {
  std::lock_guard lock(mu_);
  auto it = FindLocked(id);
  return it == held_.end() ? nullptr : it->capture;
}

bool CaptureStore::Has(int64_t id) const {
  std::lock_guard lock(mu_);
  return FindLocked(id) != held_.end();
}

size_t CaptureStore::capacity() const { return capacity_.load(std::memory_order_relaxed); }

size_t CaptureStore::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

size_t CaptureStore::size() const {
  std::lock_guard lock(mu_);
  return held_.size();
}

void CaptureStore::MakeRoom(size_t room) {
  while (!held_.empty() && bytes_ + room > capacity_) {
    bytes_ -= held_.front().bytes;
    held_.pop_front();
  }
}

}  // namespace swapd
