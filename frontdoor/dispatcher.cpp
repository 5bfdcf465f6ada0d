// The Dispatcher, top-down: Dispatch (the job and its wait) -> Run (Acquire, Forward, retry once)
// -> the records (Refuse / Record for a request refused on its way, Recorded for an exchange).
#include "frontdoor/dispatcher.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "frontdoor/auth.h"
#include "frontdoor/dispatch_job.h"
#include "frontdoor/error_response.h"
#include "frontdoor/inference_routes.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

}  // namespace

Dispatcher::Dispatcher(Router& router, Routing& routing, PeerMonitor& peers,
                       InflightTable& inflight, FrontDoorEvents events, DispatchSettings settings)
    : router_(router),
      routing_(routing),
      peers_(peers),
      inflight_(inflight),
      events_(std::move(events)),
      settings_(settings),
      proxy_([this](const std::string& model_id,
                    const std::string& what) { return DescribeBackendFailure(model_id, what); },
             [this](const ProxyRecord& record) { Recorded(record); }) {}

Dispatcher::~Dispatcher() = default;

void Dispatcher::Dispatch(const Destination& to, const HttpRequest& req, std::string_view target,
                          std::string_view body, HttpResponse& res, RequestContext& ctx,
                          bool loading_state) {
  Job job;
  job.to = to;
  job.req = &req;
  job.target = target;
  job.body = body;
  job.route = req.path.starts_with("/upstream/") ? "/upstream" : req.path;
  job.arrived = Clock::now();
  job.deadline = job.arrived + settings_.acquire_timeout;
  const std::vector<std::string>& override_keys = to.config->memory.evict_protected_keys;
  job.evict_protected =
      !override_keys.empty() &&
      IsAuthorized(override_keys, req.Header("Authorization"), req.Header("x-api-key"));
  job.capture_limit = CaptureBufferBytes(to.config->capture_buffer_mb);
  // The route as llama-swap counts it: the client's path, or under /upstream/<model>/ the rest. A
  // request translated to a model route (Ollama's /api/chat sent as /v1/chat/completions) counts
  // as that route, under the client's path.
  const std::string_view target_path = target.substr(0, target.find('?'));
  const std::string_view path =
      req.path.starts_with("/upstream/") ? target_path : std::string_view(req.path);
  const bool inference =
      IsInferenceRoute(req.method, path) || IsInferenceRoute(req.method, target_path);
  if (inference) job.inflight = inflight_.Start(req, to.id(), path);
  job.activity = inference && req.method == "POST";
  if (to.peer != nullptr && !to.peer->api_key.empty()) {
    // The peer's key replaces whatever the client sent.
    job.peer_headers = req.headers;
    job.peer_headers.Set("Authorization", "Bearer " + to.peer->api_key);
    job.peer_headers.Set("x-api-key", to.peer->api_key);
    job.peer_headers_set = true;
  }
  if (loading_state && to.model != nullptr && !router_.IsReady(to.model->id)) {
    auto streamed = std::make_shared<Job>(std::move(job));
    streamed->Own();
    return StreamWhileLoading(std::move(streamed), res);
  }
  // While the request waits (for a start, a swap, a free slot): the server learns that this
  // thread blocks, and a request whose client went away (or that was cancelled) leaves the queue.
  const Waiting waiting = [&job, &ctx] {
    ctx.WillBlock();
    job.client_gone = ctx.ClientGone();
    return job.client_gone || (job.inflight && job.inflight->cancelled());
  };
  if (Status refused = Run(job, res, ctx, waiting); !refused.ok()) Refuse(job, refused, res);
}

Status Dispatcher::Run(Job& job, HttpResponse& res, RequestContext& ctx, const Waiting& waiting) {
  for (int attempt = 0;; ++attempt) {
    Result<UpstreamTarget> upstream = Acquire(job, waiting);
    if (!upstream.ok()) return upstream.status();
    if (job.admitted && attempt == 0 && !job.admitted()) {
      job.client_gone = true;
      return Status::Error(ErrorCode::kUnavailable, "the client left");
    }
    const bool may_retry = job.to.model != nullptr && attempt == 0;
    if (proxy_.Forward(std::move(upstream).value(), ProxyRequestOf(job), res, ctx, may_retry) ==
        UpstreamProxy::Delivery::kDone) {
      return Status::Ok();
    }
    // The backend refused the connection, nothing was sent: its process has most likely just
    // died. Once the Router has noticed (milliseconds; longer on a loaded machine), Acquire
    // starts it again. A backend that refuses while alive costs this one request the wait.
    spdlog::warn("model {}: the backend refused the connection; starting it again to retry",
                 job.to.model->id);
    ctx.WillBlock();
    router_.AwaitNotReady(job.to.model->id, Clock::now() + 10s);
  }
}

Result<UpstreamTarget> Dispatcher::Acquire(Job& job, const Waiting& waiting) {
  UpstreamTarget upstream;
  upstream.id = job.to.id();
  if (const PeerConfig* peer = job.to.peer) {
    if (std::optional<PeerHealth> health = peers_.Health(peer->id);
        health && health->state == PeerHealth::State::kDown) {
      // Known down: a fast answer instead of a connect timeout, and a check at once so that a
      // peer that is back is noticed by the retry.
      peers_.CheckSoon(peer->id);
      const int64_t retry = std::max<int64_t>(1, SecondsToNextCheck(*health));
      return Status::Error(ErrorCode::kUnavailable,
                           "peer \"" + peer->id + "\" (" + peer->proxy +
                               ") is down: " + health->detail + "; model \"" + upstream.id +
                               "\" cannot be reached; retry in " + std::to_string(retry) + " s")
          .WithRetryAfter(static_cast<int>(retry));
    }
    upstream.peer = peer->id;
    upstream.url = std::make_shared<const ProxyUrl>(peer->url);
    upstream.timeouts = ConnectionTimeouts(peer->timeouts, settings_.upstream_idle_timeout);
    upstream.idle_conn = peer->timeouts.idle_conn.value_or(kPeerIdleConn);
    routing_.PeerRequestBegan(upstream.id);  // until the exchange's record
    return upstream;
  }
  const ModelConfig& model = *job.to.model;
  Result<Lease> lease = router_.Acquire(model.id, job.deadline, waiting, job.evict_protected);
  if (!lease.ok()) return lease.status();
  upstream.url = lease.value().shared_proxy_url();
  upstream.timeouts = ConnectionTimeouts(model.timeouts, settings_.upstream_idle_timeout);
  upstream.idle_conn = model.timeouts.idle_conn.value_or(kModelIdleConn);
  upstream.lease = std::move(lease).value();
  return upstream;
}

void Dispatcher::Refuse(const Job& job, const Status& why, HttpResponse& res) {
  const bool cancelled = job.inflight && job.inflight->cancelled();
  const Status told =
      cancelled ? Status::Error(ErrorCode::kUnavailable, job.inflight->CancelledMessage()) : why;
  SetErrorResponse(res, told);
  // 499, not 503: a client (the openai SDK) would send a 5xx request again.
  if (cancelled || job.client_gone) res.status = kClientClosedRequest;
  if (!events_.on_refused) return;
  ProxyRecord record;
  record.model_id = job.to.id();
  record.route = job.route;
  record.activity = job.activity;
  record.path = job.req->path;
  record.status = res.status;
  record.content_type = std::string(res.headers.Get("Content-Type"));
  record.error = told.message();
  record.client_gone = res.status == kClientClosedRequest;
  record.duration = Clock::now() - job.arrived;
  // llama-swap keeps a failed request's capture without its answer.
  CaptureBuilder capture(job.capture_limit, job.req->path, &job.req->headers, job.req->body);
  capture.SetResponseHeaders(res.headers, "");
  record.capture = capture.Finish(res.status);
  events_.on_refused(record);
}

ProxyRequest Dispatcher::ProxyRequestOf(const Job& job) const {
  ProxyRequest request;
  request.inflight = job.inflight;
  request.method = job.req->method;
  request.target = job.target;
  request.headers = job.peer_headers_set ? &job.peer_headers : &job.req->headers;
  request.body = job.body;
  request.route = job.route;  // counted with the record of the exchange
  request.activity = job.activity;
  request.path = job.req->path;
  request.client_body = job.req->body;
  request.capture_limit = job.capture_limit;
  request.capture_prefix = job.told;
  return request;
}

void Dispatcher::Recorded(const ProxyRecord& record) {
  if (!record.peer.empty()) {
    routing_.PeerRequestEnded(record.model_id);
    // What a request found out about its peer is as good as a check.
    if (record.unreachable) {
      peers_.Unreachable(record.peer, "a request could not connect");
      peers_.CheckSoon(record.peer);
    } else if (record.status > 0) {
      peers_.Reached(record.peer);
    }
  }
  if (events_.on_proxied) events_.on_proxied(record);
}

Status Dispatcher::DescribeBackendFailure(const std::string& model_id, const std::string& what) {
  // A backend that crashed is noticed a moment after the proxy sees the connection break: give
  // the Router a short while, so that the message can carry the exit status.
  std::string why = router_.AwaitFailure(model_id, Clock::now() + 1s);
  std::string message = "model \"" + model_id + "\": " + what;
  if (!why.empty()) {
    message += "; " + why;
  } else {
    std::string tail = router_.LogTail(model_id, 10);
    if (!tail.empty()) message += "; last log lines:\n" + tail;
  }
  return Status::Error(ErrorCode::kBackendFailed, message);
}

}  // namespace swapd
