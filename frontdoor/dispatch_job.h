// Dispatcher::Job: one request on its way through the Dispatcher (dispatcher.cpp, and the
// sendLoadingState stream of loading_state.cpp). Internal to those two files.
// Used by one thread at a time: the handler's, or the stream's producer's.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "frontdoor/dispatcher.h"

namespace swapd {

struct Dispatcher::Job {
  using Clock = std::chrono::steady_clock;

  Destination to;
  // The request. They point to the handler's values, or to `owned` once Own() was called.
  const HttpRequest* req = nullptr;
  std::string_view target;  // as the backend sees it
  std::string_view body;    // as forwarded (filtered)
  std::string route;        // the counters' label: "/upstream" for all of /upstream/{model}/...
  bool activity = true;     // ProxyRecord::activity
  Clock::time_point arrived;
  Clock::time_point deadline;  // of the wait for the model
  // memory.evictProtectedKeys: the request may stop `swappable: false` models to make room.
  bool evict_protected = false;
  size_t capture_limit = 0;                   // captureBuffer in bytes
  std::shared_ptr<InflightRequest> inflight;  // null for a route llama-swap does not track
  // A peer's apiKey replaces the client's: then the request goes with these headers.
  bool peer_headers_set = false;
  HttpHeaders peer_headers;
  bool client_gone = false;  // seen while the request waited for its model
  // What the client already got of the answer from swapd itself (sendLoadingState's text).
  std::string told;
  // Called when the model is admitted, before the request is sent; false gives up (the client
  // is gone). Empty: go on.
  std::function<bool()> admitted;

  // The job outlives the handler (the sendLoadingState stream): copies what it points to.
  void Own() {
    owned_ = std::make_unique<Owned>(Owned{*req, std::string(target), std::string(body)});
    req = &owned_->req;
    target = owned_->target;
    body = owned_->body;
  }

 private:
  struct Owned {
    HttpRequest req;
    std::string target;
    std::string body;
  };
  std::unique_ptr<Owned> owned_;
};

}  // namespace swapd
