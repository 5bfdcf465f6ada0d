#include "frontdoor/inflight_table.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
#include <iterator>

#include "base/pacer.h"
#include "frontdoor/proxy_message.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

// Bytes of one request's answer are told at most this often (llama-swap's interval).
constexpr auto kUpsertEvery = std::chrono::milliseconds(250);

std::string Rfc3339Millis(std::chrono::system_clock::time_point t) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const time_t seconds = static_cast<time_t>(ms / 1000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + n, sizeof text - n, ".%03dZ", static_cast<int>(ms % 1000));
  return text;
}

// llama-swap's clientIP: the first X-Forwarded-For address, X-Real-IP, the peer's address.
std::string ClientIp(const HttpRequest& req) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return std::string(s);
  };
  if (std::string_view xff = req.Header("X-Forwarded-For"); !xff.empty()) {
    return trim(xff.substr(0, xff.find(',')));
  }
  if (std::string_view real = req.Header("X-Real-IP"); !real.empty()) return trim(real);
  return req.remote_addr;
}

int64_t Nanos(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

// What the table and its requests share; outlives the table while requests hold it.
struct InflightRequest::Shared {
  explicit Shared(std::chrono::milliseconds flush_every)
      : pacer(flush_every, [this] {
          std::lock_guard telling(tell_mu);
          std::vector<nlohmann::json> batch;
          {
            std::lock_guard lock(mu);
            batch = Collect();
          }
          Tell(batch);
        }) {}

  // Taken before `mu` (never the other way): held while a batch of changes is collected and told,
  // so that batches go out in order and a snapshot falls between two of them. The requests'
  // threads never take it: rendering and delivering a batch to the readers holds no lock they
  // wait for. (A flush under `mu` made every request's start and end wait while it ran: with one
  // /api/events reader, a flood of small requests kept 0.981 of its throughput, 0.997 since;
  // bench/README.md.)
  std::mutex tell_mu;
  mutable std::mutex mu;
  // Guarded by mu:
  // The requests, oldest first (ids ascending): each links to its neighbours, so that joining
  // and leaving cost no allocation.
  InflightRequest* oldest = nullptr;
  InflightRequest* newest = nullptr;
  size_t count = 0;
  InflightListener listener;         // written under tell_mu and mu both
  size_t due = 0;                    // requests with an upsert due (their upsert_due_)
  std::vector<std::string> removed;  // ids of told requests that ended since the last flush
  uint64_t next_id = 0;
  // Changes are told in batches at most every flush_every: a request that starts and ends between
  // two is never told (bench/events_bench.sh: an event per change took a third of the throughput
  // of small requests with 50 readers). What is due is a flag on the request, not a set of ids:
  // with readers, every request is due once, and a set's node costs an allocation each time.
  // Last: its thread ends before the rest goes.
  Pacer pacer;

  // mu held.
  bool Watched() const { return listener.publish && (!listener.watched || listener.watched()); }
  void Upsert(InflightRequest& r) {
    if (r.upsert_due_ || !Watched()) return;
    r.upsert_due_ = true;
    ++due;
    pacer.Poke();
  }
  void Join(InflightRequest& r) {
    r.number_ = ++next_id;
    r.id_ = std::to_string(r.number_);
    r.older_ = newest;
    (newest != nullptr ? newest->newer_ : oldest) = &r;
    newest = &r;
    ++count;
  }
  void Leave(InflightRequest& r) {
    (r.older_ != nullptr ? r.older_->newer_ : oldest) = r.newer_;
    (r.newer_ != nullptr ? r.newer_->older_ : newest) = r.older_;
    --count;
  }
  void Ended(const InflightRequest& r) {
    if (r.upsert_due_) --due;
    if (r.told_) {
      removed.push_back(r.id_);
      pacer.Poke();
    }
  }
  // The events of what changed since the last batch: upserts, then removes. mu held.
  std::vector<nlohmann::json> Collect() {
    const bool watched = Watched();  // no one: a new reader starts from a snapshot
    std::vector<nlohmann::json> batch;
    for (InflightRequest* it = oldest; due > 0 && it != nullptr; it = it->newer_) {
      InflightRequest& r = *it;
      if (!r.upsert_due_) continue;
      r.upsert_due_ = false;
      --due;
      if (!watched) continue;
      batch.push_back({{"operation", "upsert"}, {"request", r.EntryJson()}});
      r.told_ = true;
    }
    if (watched) {
      for (std::string& id : removed) {
        batch.push_back({{"operation", "remove"}, {"id", std::move(id)}});
      }
    }
    removed.clear();
    return batch;
  }
  // tell_mu held (the listener does not change meanwhile), mu not.
  void Tell(const std::vector<nlohmann::json>& batch) const {
    for (const nlohmann::json& change : batch) listener.publish(change);
  }
};

InflightRequest::InflightRequest(Key, std::shared_ptr<Shared> table) : table_(std::move(table)) {}

InflightRequest::~InflightRequest() {
  std::lock_guard lock(table_->mu);
  table_->Leave(*this);
  table_->Ended(*this);
}

std::string InflightRequest::CancelledMessage() const {
  return "request " + id_ + " for model \"" + model_ + "\" was cancelled (POST /api/inflight/" +
         id_ + "/cancel)";
}

void InflightRequest::SetSocket(int fd) {
  std::lock_guard lock(fd_mu_);
  fd_ = fd;
  if (fd_ >= 0 && cancelled()) ::shutdown(fd_, SHUT_RDWR);
}

void InflightRequest::SetResponseHeaders(const std::vector<HeaderField>& headers) {
  // What the client gets: not the backend connection's own fields (Keep-Alive, framing).
  HeaderSnapshot passed(headers, IsHopByHop);
  std::lock_guard lock(table_->mu);
  resp_headers_ = std::move(passed);
  next_upsert_ns_.store(Nanos(Clock::now() + kUpsertEvery), std::memory_order_relaxed);
  table_->Upsert(*this);
}

void InflightRequest::AddResponseBytes(size_t n) {
  if (n == 0) return;
  resp_bytes_.fetch_add(n, std::memory_order_relaxed);
  // Most pieces end here: one clock read and a compare.
  const auto now = Clock::now();
  int64_t due = next_upsert_ns_.load(std::memory_order_relaxed);
  if (Nanos(now) < due) return;
  if (!next_upsert_ns_.compare_exchange_strong(due, Nanos(now + kUpsertEvery))) return;
  std::lock_guard lock(table_->mu);
  table_->Upsert(*this);
}

nlohmann::json InflightRequest::EntryJson() const {
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began_).count();
  return {{"id", id_},
          {"timestamp", Rfc3339Millis(timestamp_)},
          {"model", model_},
          {"req_path", req_path_},
          {"method", method_},
          {"req_headers", req_headers_.ToJson()},
          {"remote_ip", remote_ip_},
          {"resp_headers", resp_headers_.ToJson()},
          {"resp_bytes", resp_bytes_.load(std::memory_order_relaxed)},
          {"elapsed_ms", std::max<int64_t>(0, elapsed)},
          {"metadata", nlohmann::json::object()}};
}

InflightTable::InflightTable(std::chrono::milliseconds flush_every)
    : shared_(std::make_shared<InflightRequest::Shared>(flush_every)) {}

InflightTable::~InflightTable() {
  // Requests may outlive the table (they hold Shared); nothing is told once it is gone.
  shared_->pacer.Stop();
}

void InflightTable::SetListener(InflightListener listener) {
  std::lock_guard telling(shared_->tell_mu);
  std::lock_guard lock(shared_->mu);
  shared_->listener = std::move(listener);
}

std::shared_ptr<InflightRequest> InflightTable::Start(const HttpRequest& req,
                                                      const std::string& model,
                                                      std::string_view req_path) {
  // One allocation for the request and its count.
  auto r = std::make_shared<InflightRequest>(InflightRequest::Key{}, shared_);
  r->timestamp_ = std::chrono::system_clock::now();
  r->began_ = Clock::now();
  r->next_upsert_ns_.store(Nanos(r->began_ + kUpsertEvery), std::memory_order_relaxed);
  r->model_ = model;
  r->req_path_ = std::string(req_path);
  r->method_ = req.method;
  r->req_headers_ = HeaderSnapshot(req.headers);
  r->remote_ip_ = ClientIp(req);
  std::lock_guard lock(shared_->mu);
  shared_->Join(*r);  // its id, in the order of joining
  shared_->Upsert(*r);
  return r;
}

bool InflightTable::Cancel(const std::string& id) {
  uint64_t number = 0;
  for (char c : id) {
    if (c < '0' || c > '9' || number > (UINT64_MAX - 9) / 10) return false;
    number = number * 10 + static_cast<uint64_t>(c - '0');
  }
  std::lock_guard lock(shared_->mu);
  InflightRequest* it = shared_->oldest;  // a few requests, and a cancel is rare
  while (it != nullptr && it->number_ != number) it = it->newer_;
  if (id.empty() || it == nullptr) return false;
  InflightRequest& r = *it;
  r.cancelled_.store(true, std::memory_order_release);
  // Wakes a wait on the socket, and the backend sees its client leave.
  std::lock_guard fd_lock(r.fd_mu_);
  if (r.fd_ >= 0) ::shutdown(r.fd_, SHUT_RDWR);
  return true;
}

void InflightTable::WithSnapshot(
    const std::function<void(const nlohmann::json& snapshot)>& with) const {
  std::lock_guard telling(shared_->tell_mu);
  // What is due goes to the readers there are; the new one starts from here, and learns of the
  // end of every request in its snapshot. A change after this is told after `with`.
  nlohmann::json requests = nlohmann::json::array();
  std::vector<nlohmann::json> batch;
  {
    std::lock_guard lock(shared_->mu);
    batch = shared_->Collect();
    for (InflightRequest* r = shared_->oldest; r != nullptr; r = r->newer_) {
      requests.push_back(r->EntryJson());
      r->told_ = true;
    }
  }
  shared_->Tell(batch);
  with({{"operation", "snapshot"}, {"requests", std::move(requests)}});
}

size_t InflightTable::size() const {
  std::lock_guard lock(shared_->mu);
  return shared_->count;
}

}  // namespace swapd
