// InflightTable: the model-dispatched (inference) requests in flight, as llama-swap's /api/events
// `inflight` event shows them, and their cancellation (POST /api/inflight/{id}/cancel).
// A request is in the table from the moment its model is known (also while it waits for the model
// to load) until its response is done with: an InflightRequest, shared by whatever carries the
// request on (the dispatch, the proxy's exchange, a sendLoadingState stream), leaves the table
// when the last holder lets go.
// Changes are told to the listener as the data of `inflight` events: {operation: "upsert",
// request: entry} when a request starts, when its answer's headers arrive, and as its answer's
// bytes flow (at most once per request per 250 ms); {operation: "remove", id} when it ends. They
// are told in batches, by a thread of the table's, at most every 100 ms: a request that started and
// ended in between is not told at all (its `activity` row is), and one told several changes is
// told once. Nothing is rendered while the listener's `watched` says no one listens. Entries, as
// llama-swap's: {id (a decimal string), timestamp (RFC 3339, UTC), model, req_path, method,
// req_headers (one value per name, API keys and cookies "[REDACTED]"), remote_ip, resp_headers,
// resp_bytes, elapsed_ms, metadata}. Cancelling a request marks it and shuts down the upstream
// socket its exchange uses, if any: that wakes any wait on it and tells the backend to stop; what
// waits for the model (Router::Acquire) sees the mark within its poll. The request then ends as if
// its client had left, except that the client, still there, is told: 499 with a JSON error, or an
// error event that ends an event stream. Thread safe. The listener's `publish` is called by one
// thread at a time, in order (on the table's thread or in WithSnapshot), without the lock the
// requests' threads take; `watched` under that lock. Neither may call back into the table, nor log.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "frontdoor/header_snapshot.h"
#include "frontdoor/inference_routes.h"
#include "http/http1_response.h"
#include "http/message.h"

namespace swapd {

struct InflightListener {
  std::function<bool()> watched;  // whether an event would reach anyone; quick
  std::function<void(const nlohmann::json& data)> publish;  // an `inflight` event's data
};

class InflightTable;

// One request in flight. Thread safe.
class InflightRequest {
  struct Shared;
  struct Key {};  // only the table makes one

 public:
  InflightRequest(Key, std::shared_ptr<Shared> table);
  ~InflightRequest();  // leaves the table (a `remove` event)
  InflightRequest(const InflightRequest&) = delete;
  InflightRequest& operator=(const InflightRequest&) = delete;

  const std::string& id() const { return id_; }
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  // What the client is told of a cancelled request.
  std::string CancelledMessage() const;

  // The upstream socket the request's exchange uses from now on; -1 before it closes or gives
  // the socket back. A cancel shuts down the socket set (at once, if it came already).
  void SetSocket(int fd);
  // The backend's answer's headers arrived.
  void SetResponseHeaders(const std::vector<HeaderField>& headers);
  // `n` more bytes of the answer went by.
  void AddResponseBytes(size_t n);

 private:
  friend class InflightTable;

  nlohmann::json EntryJson() const;  // table lock held

  const std::shared_ptr<Shared> table_;
  // Set under the table's lock when it joins the table, read-only after:
  uint64_t number_ = 0;
  std::string id_;
  std::atomic<bool> cancelled_{false};
  std::atomic<uint64_t> resp_bytes_{0};
  std::atomic<int64_t> next_upsert_ns_{0};  // steady clock: bytes are told again from then on
  // Set at the start, read-only after:
  std::chrono::system_clock::time_point timestamp_;
  std::chrono::steady_clock::time_point began_;
  std::string model_;
  std::string req_path_;
  std::string method_;
  HeaderSnapshot req_headers_;
  std::string remote_ip_;
  // The socket a cancel shuts down, under its own lock (taken after the table's, in Cancel) so
  // that the three changes of it a request makes do not contend for the table's. Held while the
  // socket is shut down: it is never one the exchange has closed meanwhile.
  std::mutex fd_mu_;
  int fd_ = -1;  // guarded by fd_mu_
  // Guarded by the table's lock:
  InflightRequest* older_ = nullptr;  // the table's requests, a list in id order
  InflightRequest* newer_ = nullptr;
  HeaderSnapshot resp_headers_;
  bool upsert_due_ = false;  // a change waits for the next flush
  bool told_ = false;        // readers know of it: its end is told
};

class InflightTable {
 public:
  // Changes are told at most every `flush_every` (tests take a longer one).
  explicit InflightTable(std::chrono::milliseconds flush_every = std::chrono::milliseconds(100));
  ~InflightTable();

  void SetListener(InflightListener listener);

  // A new request for `model` (the model's id, or "<peer>/<model>") whose path, as the backend
  // sees it, is `req_path`.
  std::shared_ptr<InflightRequest> Start(const HttpRequest& req, const std::string& model,
                                         std::string_view req_path);

  // Cancels request `id`; false when there is no such request.
  bool Cancel(const std::string& id);

  // {operation: "snapshot", requests: [entry...]} (oldest first), given to `with` while no change
  // is told: none between the snapshot and whatever `with` does. `with` must not call back into
  // the table.
  void WithSnapshot(const std::function<void(const nlohmann::json& snapshot)>& with) const;

  size_t size() const;

 private:
  std::shared_ptr<InflightRequest::Shared> shared_;
};

}  // namespace swapd
