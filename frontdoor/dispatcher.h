// Dispatcher: the one path of an inference request once its model is known, for a local model and
// for a peer's model alike:
//   acquire  a local model's lease (Router::Acquire: may queue, stop others, start it); a peer
//            needs none, but one known to be down refuses at once (503 naming it);
//   forward  the request (UpstreamProxy), which streams the answer back;
//   retry    once, when a local backend refused the connection (it has most likely just died and
//            the Router starts it again);
//   record   what happened: FrontDoorEvents::on_proxied for an exchange, on_refused for a request
//            answered without one (the activity row, the metrics).
// A streamed chat request for a model that is not ready, with sendLoadingState, takes the same
// path inside its answer's stream (loading_state.cpp): the client gets the head at once and the
// load's progress while the stream's producer waits in Router::Acquire; no thread of its own.
// Thread safe: Dispatch runs on the server's threads, many at once.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "backends/router.h"
#include "base/status.h"
#include "config/config.h"
#include "frontdoor/inflight_table.h"
#include "frontdoor/peer_monitor.h"
#include "frontdoor/routing.h"
#include "frontdoor/upstream_proxy.h"
#include "http/message.h"
#include "http/request_context.h"

namespace swapd {

// What the front door reports about the requests it answers (metrics, the request history). Either
// may be empty; both are called on server threads and must be quick.
struct FrontDoorEvents {
  // A request that reached a backend: its whole exchange.
  std::function<void(const ProxyRecord&)> on_proxied;
  // A request answered without reaching a backend (queue timeout, start failure, 429, client
  // gone or cancelled while it waited, a peer known down): model_id, route, path, status, error,
  // duration, and the capture of the request.
  std::function<void(const ProxyRecord&)> on_refused;
};

struct DispatchSettings {
  // How long a request may wait for its model (queueing behind a swap, plus the start itself).
  std::chrono::seconds acquire_timeout{3600};
  // A backend that sends nothing for this long fails the request (--upstream-idle-timeout).
  std::chrono::seconds upstream_idle_timeout = kDefaultUpstreamIdleTimeout;
};

// Where a request goes: a local model, or a peer's model.
struct Destination {
  std::shared_ptr<const Config> config;  // what `model` and `peer` belong to
  const ModelConfig* model = nullptr;    // a local model, or null for a peer's
  const PeerConfig* peer = nullptr;      // the peer, or null for a local model
  std::string peer_model;                // the peer's own name for its model
  static Destination Local(std::shared_ptr<const Config> config, const ModelConfig& model) {
    return {std::move(config), &model, nullptr, {}};
  }
  static Destination Peer(std::shared_ptr<const Config> config, const PeerModelRef& ref) {
    const PeerConfig* peer = &config->peers.at(ref.peer);
    return {std::move(config), nullptr, peer, ref.model};
  }

  // The model's id, or "<peer>/<model>": what the records, the in-flight table and the
  // messages call it.
  std::string id() const { return model ? model->id : PeerModelId(peer->id, peer_model); }
};

class Dispatcher {
 public:
  // Does not own its arguments; they must outlive it.
  Dispatcher(Router& router, Routing& routing, PeerMonitor& peers, InflightTable& inflight,
             FrontDoorEvents events, DispatchSettings settings);
  ~Dispatcher();

  // Sends `req` on to `to` as `target` (path and query as the backend sees them) with `body`
  // (both outlive the call) and answers `res`. `loading_state`: sendLoadingState applies (a
  // streamed chat request whose model's or the configuration's setting is on).
  void Dispatch(const Destination& to, const HttpRequest& req, std::string_view target,
                std::string_view body, HttpResponse& res, RequestContext& ctx,
                bool loading_state = false);

 private:
  struct Job;
  // Polled every 50 ms while a request waits for its model; true gives up (the client left).
  using Waiting = std::function<bool()>;

  // Acquire, forward, retry once. OK once `res` has the answer's head (or a deferred step will
  // complete it); otherwise why the request was refused, with nothing sent anywhere.
  Status Run(Job& job, HttpResponse& res, RequestContext& ctx, const Waiting& waiting);
  // A local model's lease, or a peer that is not known to be down, as where to send the request.
  Result<UpstreamTarget> Acquire(Job& job, const Waiting& waiting);
  // Answers `res` with why the request was refused (499 when its client left or cancelled it)
  // and records it.
  void Refuse(const Job& job, const Status& why, HttpResponse& res);
  ProxyRequest ProxyRequestOf(const Job& job) const;
  // The exchange's record: the peer's traffic and health, then the events.
  void Recorded(const ProxyRecord& record);
  // The client's error for a local backend that failed a request: `what` and why the model
  // stopped serving (exit status and log tail), once the Router knows.
  Status DescribeBackendFailure(const std::string& model_id, const std::string& what);
  // sendLoadingState's answer (loading_state.cpp): a 200 event stream that tells the load while
  // its producer runs the job, then relays the backend's stream.
  void StreamWhileLoading(std::shared_ptr<Job> job, HttpResponse& res);

  Router& router_;
  Routing& routing_;
  PeerMonitor& peers_;
  InflightTable& inflight_;
  const FrontDoorEvents events_;
  const DispatchSettings settings_;
  UpstreamProxy proxy_;
};

}  // namespace swapd
