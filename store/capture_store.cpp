#include "store/capture_store.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

namespace swapd {
namespace {

// A capture's parts, in the order they are laid out; empty for a part not kept.
std::array<std::string_view, CaptureStore::kParts> PartsOf(const RequestCapture& c) {
  auto text = [](const std::optional<std::string>& s) { return s ? std::string_view(*s) : ""; };
  auto headers = [](const std::optional<HeaderSnapshot>& h) {
    return h ? h->encoded() : std::string_view();
  };
  return {c.req_path, headers(c.req_headers), text(c.req_body), headers(c.resp_headers),
          text(c.resp_body)};
}

}  // namespace

size_t CaptureStore::Held::size() const {
  size_t n = 0;
  for (size_t length : lengths) n += length;
  return n;
}

CaptureStore::Mapping::Mapping(size_t size) {
  if (size == 0) return;
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  data_ = static_cast<char*>(p);
  size_ = size;
}

CaptureStore::Mapping::~Mapping() {
  if (data_ != nullptr) munmap(data_, size_);
}

CaptureStore::Mapping::Mapping(Mapping&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

CaptureStore::Mapping& CaptureStore::Mapping::operator=(Mapping&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

CaptureStore::CaptureStore(size_t capacity_bytes)
    : capacity_(capacity_bytes), ring_(capacity_bytes) {}

size_t CaptureStore::BytesOf(const RequestCapture& capture) {
  size_t n = sizeof(Held);
  for (std::string_view part : PartsOf(capture)) n += part.size();
  return n;
}

void CaptureStore::SetCapacity(size_t capacity_bytes) {
  std::lock_guard lock(mu_);
  if (capacity_bytes == capacity_ && ring_.size() == capacity_bytes) return;
  capacity_ = capacity_bytes;
  while (!held_.empty() && bytes_ > capacity_bytes) DropOldest();
  // The captures kept, laid out from the start of a ring of the new size.
  Mapping ring(capacity_bytes);
  if (ring.data() == nullptr) {  // 0, or the system refused: none kept
    held_.clear();
    bytes_ = 0;
  }
  size_t at = 0;
  for (Held& h : held_) {
    const size_t n = h.size();
    if (n > 0) std::memcpy(ring.data() + at, ring_.data() + h.offset, n);
    h.offset = at;
    at += n;
  }
  ring_ = std::move(ring);
  head_ = at;
}

bool CaptureStore::Add(int64_t id, const RequestCapture& capture) {
  const size_t need = BytesOf(capture);
  std::lock_guard lock(mu_);
  if (need > ring_.size()) return false;          // (no ring: the system refused to map it)
  if (!held_.empty() && held_.back().id >= id) {  // a new history
    while (!held_.empty() && held_.back().id >= id) {
      bytes_ -= held_.back().size() + sizeof(Held);
      held_.pop_back();
    }
    head_ = held_.empty() ? 0 : held_.back().offset + held_.back().size();
  }
  while (!held_.empty() && bytes_ + need > capacity_) DropOldest();
  const size_t n = need - sizeof(Held);
  Held entry;
  entry.id = id;
  entry.offset = Place(n);
  const std::array<std::string_view, kParts> parts = PartsOf(capture);
  const bool present[kParts] = {true, capture.req_headers.has_value(), capture.req_body.has_value(),
                                capture.resp_headers.has_value(), capture.resp_body.has_value()};
  size_t at = entry.offset;
  for (size_t p = 0; p < kParts; ++p) {
    if (!parts[p].empty()) std::memcpy(ring_.data() + at, parts[p].data(), parts[p].size());
    at += parts[p].size();
    entry.lengths[p] = parts[p].size();
    if (present[p]) entry.present |= 1u << p;
  }
  held_.push_back(entry);
  head_ = at;
  bytes_ += need;
  return true;
}

void CaptureStore::DropOldest() {
  bytes_ -= held_.front().size() + sizeof(Held);
  held_.pop_front();
}

size_t CaptureStore::Place(size_t n) {
  size_t at = head_;
  if (at + n > ring_.size()) {
    // Back to the start: what the lap before left past head_ is older than everything from 0.
    while (!held_.empty() && held_.front().offset >= head_) DropOldest();
    at = 0;
  }
  // The oldest entries lie just past `at` (a lap is written in order): those in its way go.
  while (!held_.empty() && held_.front().offset < at + n &&
         at < held_.front().offset + held_.front().size()) {
    DropOldest();
  }
  return at;
}

std::deque<CaptureStore::Held>::const_iterator CaptureStore::FindLocked(int64_t id) const {
  auto it = std::lower_bound(held_.begin(), held_.end(), id,
                             [](const Held& h, int64_t wanted) { return h.id < wanted; });
  return it != held_.end() && it->id == id ? it : held_.end();
}

std::shared_ptr<const RequestCapture> CaptureStore::Find(int64_t id) const {
  std::lock_guard lock(mu_);
  auto it = FindLocked(id);
  if (it == held_.end()) return nullptr;
  std::array<std::string_view, kParts> parts;
  size_t at = it->offset;
  for (size_t p = 0; p < kParts; ++p) {
    parts[p] = std::string_view(ring_.data() + at, it->lengths[p]);
    at += it->lengths[p];
  }
  auto kept = [&](Part p) { return (it->present & (1u << p)) != 0; };
  auto capture = std::make_shared<RequestCapture>();
  capture->req_path = std::string(parts[kPath]);
  if (kept(kReqHeaders)) capture->req_headers = HeaderSnapshot::FromEncoded(parts[kReqHeaders]);
  if (kept(kReqBody)) capture->req_body = std::string(parts[kReqBody]);
  if (kept(kRespHeaders)) capture->resp_headers = HeaderSnapshot::FromEncoded(parts[kRespHeaders]);
  if (kept(kRespBody)) capture->resp_body = std::string(parts[kRespBody]);
  return capture;
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

}  // namespace swapd
