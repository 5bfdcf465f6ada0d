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
  const size_t bytes = capture->Bytes();
  std::lock_guard lock(mu_);
  if (bytes > capacity_) return false;
  if (auto it = held_.find(id); it != held_.end()) {  // an id again (a new history): replaced
    bytes_ -= it->second.bytes;
    held_.erase(it);
    order_.erase(std::find(order_.begin(), order_.end(), id));
  }
  MakeRoom(bytes);
  held_.emplace(id, Held{std::move(capture), bytes});
  order_.push_back(id);
  bytes_ += bytes;
  return true;
}

std::shared_ptr<const RequestCapture> CaptureStore::Find(int64_t id) const {
  std::lock_guard lock(mu_);
  auto it = held_.find(id);
  return it == held_.end() ? nullptr : it->second.capture;
}

bool CaptureStore::Has(int64_t id) const {
  std::lock_guard lock(mu_);
  return held_.count(id) > 0;
}

size_t CaptureStore::capacity() const {
  std::lock_guard lock(mu_);
  return capacity_;
}

size_t CaptureStore::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

size_t CaptureStore::size() const {
  std::lock_guard lock(mu_);
  return held_.size();
}

void CaptureStore::MakeRoom(size_t room) {
  while (!order_.empty() && bytes_ + room > capacity_) {
    auto it = held_.find(order_.front());
    bytes_ -= it->second.bytes;
    held_.erase(it);
    order_.pop_front();
  }
}

}  // namespace swapd
