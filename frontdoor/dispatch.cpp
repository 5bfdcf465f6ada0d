// FrontDoor's dispatch to a local model: Dispatch waits for the Router's lease (starting or
// swapping the model) and hands the request to the UpstreamProxy, retrying once when the backend
// refused the connection; a request refused on the way is recorded (Refused) like a proxied one.
#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "frontdoor/auth.h"
#include "frontdoor/error_response.h"
#include "frontdoor/front_door.h"
#include "frontdoor/inflight_table.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

void FrontDoor::Refused(const std::string& model, const std::string& route, const HttpRequest& req,
                        const HttpResponse& res, std::string error,
                        std::chrono::steady_clock::time_point arrived) {
  if (!events_.on_refused) return;
  ProxyRecord record;
  record.model_id = model;
  record.route = route;
  record.path = req.path;
  record.status = res.status;
  record.content_type = std::string(res.headers.Get("Content-Type"));
  record.error = std::move(error);
  record.client_gone = res.status == kClientClosedRequest;
  record.duration = Clock::now() - arrived;
  // llama-swap keeps a failed request's capture without its answer.
  CaptureBuilder capture(CaptureBufferBytes(config()->capture_buffer_mb), req.path, &req.headers,
                         req.body);
  capture.SetResponseHeaders(res.headers, "");
  record.capture = capture.Finish(res.status);
  events_.on_refused(record);
}

void FrontDoor::Dispatch(const ModelConfig& model, const HttpRequest& req, std::string_view target,
                         std::string_view body, HttpResponse& res, RequestContext& ctx,
                         bool loading_state) {
  const auto arrived = Clock::now();
  const auto deadline = arrived + settings_.acquire_timeout;
  // The route label of the request counters: /upstream/{model}/... all count as "/upstream".
  const std::string route = req.path.rfind("/upstream/", 0) == 0 ? "/upstream" : req.path;
  // memory.evictProtectedKeys: this request may stop `swappable: false` models to make room.
  const std::shared_ptr<const Config> config_now = config();
  const std::vector<std::string>& override_keys = config_now->memory.evict_protected_keys;
  const bool evict_protected =
      !override_keys.empty() &&
      IsAuthorized(override_keys, req.Header("Authorization"), req.Header("x-api-key"));
  std::shared_ptr<InflightRequest> inflight = Track(req, model.id, target);
  if (loading_state && !router_.IsReady(model.id)) {
    return DispatchWithLoadingState(model, req, target, body, res, evict_protected,
                                    std::move(inflight));
  }
  for (int attempt = 0;; ++attempt) {
    // Called only while the request waits (for a start, a swap, a free slot), every 50 ms: the
    // server learns that this thread blocks, and a request whose client went away (or that was
    // cancelled) leaves the queue, as at its deadline.
    bool client_gone = false;
    auto cancelled = [&client_gone, &ctx, &inflight] {
      ctx.WillBlock();
      return client_gone = ctx.ClientGone() || (inflight && inflight->cancelled());
    };
    Result<Lease> lease = router_.Acquire(model.id, deadline, cancelled, evict_protected);
    if (!lease.ok()) {
      if (inflight && inflight->cancelled()) {
        // 499, not 503: a client (the openai SDK) would send a 5xx request again.
        SetErrorResponse(res, Status::Error(ErrorCode::kUnavailable, inflight->CancelledMessage()));
        res.status = kClientClosedRequest;
        Refused(model.id, route, req, res, inflight->CancelledMessage(), arrived);
        return;
      }
      SetErrorResponse(res, lease.status());
      if (client_gone) res.status = kClientClosedRequest;
      Refused(model.id, route, req, res, lease.status().message(), arrived);
      return;
    }
    const ProxyRequest request = ProxyRequestOf(req, target, body, route, inflight);
    if (proxy_->Forward(LocalUpstream(model.timeouts, std::move(lease).value()), request, res, ctx,
                        /*may_retry=*/attempt == 0) == UpstreamProxy::Delivery::kDone) {
      break;
    }
    // The backend refused the connection, nothing was sent: its process has most likely just
    // died. Once the Router has noticed (milliseconds; longer on a loaded machine), Acquire
    // starts it again. A backend that refuses while alive costs this one request the wait.
    spdlog::warn("model {}: the backend refused the connection; starting it again to retry",
                 model.id);
    ctx.WillBlock();
    router_.AwaitNotReady(model.id, Clock::now() + std::chrono::seconds(10));
  }
}

std::shared_ptr<InflightRequest> FrontDoor::Track(const HttpRequest& req, const std::string& model,
                                                  std::string_view target) {
  const std::string_view path = target.substr(0, target.find('?'));
  if (!IsInferenceRoute(req.method, path)) return nullptr;
  return inflight_.Start(req, model, path);
}

void FrontDoor::HandleCancel(const std::string& id, HttpResponse& res) {
  if (!inflight_.Cancel(id)) {
    return SetErrorResponse(
        res, Status::Error(ErrorCode::kNotFound, "inflight request not found: \"" + id + "\""));
  }
  res.SetBody(nlohmann::json{{"msg", "ok"}}.dump(), "application/json");
}

ProxyRequest FrontDoor::ProxyRequestOf(const HttpRequest& req, std::string_view target,
                                       std::string_view body, const std::string& route,
                                       std::shared_ptr<InflightRequest> inflight) const {
  ProxyRequest request;
  request.inflight = std::move(inflight);
  request.method = req.method;
  request.target = target;
  request.headers = &req.headers;
  request.body = body;
  request.route = route;  // counted with the record of the exchange
  request.path = req.path;
  request.client_body = req.body;
  request.capture_limit = CaptureBufferBytes(config()->capture_buffer_mb);
  return request;
}

UpstreamTarget FrontDoor::LocalUpstream(const TimeoutsConfig& timeouts, Lease lease) const {
  // An idle keep-alive connection to a local backend is kept 3 s unless its timeouts.idleConn
  // says otherwise: it holds one of llama-server's few HTTP threads (whose own limit is 5 s).
  constexpr std::chrono::seconds kLocalIdleConn{3};
  UpstreamTarget upstream;
  upstream.id = lease.model_id();
  upstream.url = lease.proxy_url();
  upstream.timeouts = ConnectionTimeouts(timeouts, settings_.upstream_idle_timeout);
  upstream.idle_conn = timeouts.idle_conn.value_or(kLocalIdleConn);
  upstream.lease = std::move(lease);
  return upstream;
}

Status FrontDoor::DescribeBackendFailure(const std::string& model_id, const std::string& what) {
  // A backend that crashed is noticed a moment after the proxy sees the connection break: give
  // the Router a short while, so that the message can carry the exit status.
  std::string why = router_.AwaitFailure(model_id, Clock::now() + std::chrono::seconds(1));
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
