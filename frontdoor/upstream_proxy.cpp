// UpstreamProxy: Forward starts an Exchange (upstream_exchange.h) per request; Describe words a
// failed exchange for the client.
#include "frontdoor/upstream_proxy.h"

#include "base/proxy_url.h"
#include "frontdoor/upstream_exchange.h"
#include "http/request_context.h"

namespace swapd {
namespace {

using Kind = UpstreamFailure::Kind;

bool Idempotent(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS";
}

}  // namespace

UpstreamConnection::Timeouts ConnectionTimeouts(const TimeoutsConfig& timeouts,
                                                std::chrono::seconds read) {
  UpstreamConnection::Timeouts out;
  out.connect = timeouts.connect;
  out.read = read;
  out.response_header = timeouts.response_header;
  out.tls_handshake = timeouts.tls_handshake;
  out.keepalive = timeouts.keepalive;
  return out;
}

UpstreamProxy::UpstreamProxy(FailureDescriber describe_failure, RecordSink on_record)
    : describe_failure_(std::move(describe_failure)), on_record_(std::move(on_record)) {}

UpstreamProxy::~UpstreamProxy() = default;

UpstreamProxy::Delivery UpstreamProxy::Forward(UpstreamTarget target, const ProxyRequest& request,
                                               HttpResponse& res, RequestContext& ctx,
                                               bool may_retry) {
  auto ex = std::make_shared<Exchange>(this, std::move(target), request);
  UpstreamFailure failure;
  const std::string head = UpstreamRequestHead(*ex->target.url, request);
  switch (ex->Send(head, request.body, Idempotent(request.method), ctx, failure)) {
    case Exchange::Sent::kFailed:
      if (may_retry && failure.kind == Kind::kRefused) {
        ex->Discard();
        return Delivery::kRefused;
      }
      ex->Fail(res, failure, ctx);
      return Delivery::kDone;
    case Exchange::Sent::kHeadPending:
      ctx.Defer(ex->Wait(&Exchange::AwaitHead));
      return Delivery::kDone;
    case Exchange::Sent::kHeadRead:
      break;
  }
  DeferredStep rest = ex->OnHead(res, ctx);
  // The whole-answer path asks the server again: more requests may be in flight by now.
  if (!rest.done()) ctx.Defer(std::move(rest));
  return Delivery::kDone;
}

Status UpstreamProxy::Describe(const UpstreamTarget& target, bool headers_seen,
                               const UpstreamFailure& failure, RequestContext& ctx) const {
  const bool peer = !target.peer.empty();
  const char* who = peer ? "the peer" : "the backend";
  // timeouts.responseHeader passed (a 504, where the backend's silence is a 502).
  const bool head_limit = failure.kind == Kind::kTimeout && !headers_seen &&
                          target.timeouts.HeadLimit() < target.timeouts.read;
  std::string what;
  if (failure.kind == Kind::kTimeout) {
    what =
        std::string(who) + (headers_seen ? "'s response stalled" : " did not answer") +
        ": nothing for " +
        std::to_string((head_limit ? target.timeouts.HeadLimit() : target.timeouts.read).count()) +
        (head_limit ? " s (timeouts.responseHeader)" : " s (--upstream-idle-timeout)");
  } else if (failure.kind == Kind::kRefused || failure.kind == Kind::kConnect) {
    what = std::string("could not reach ") + who + ": " + failure.text;
  } else if (failure.kind == Kind::kMalformed && !headers_seen) {
    what = std::string(who) + " did not answer in HTTP: " + failure.text;
  } else {
    what = std::string(who) + (headers_seen ? "'s response broke off: " : " did not answer: ") +
           failure.text;
  }
  const ErrorCode code = head_limit ? ErrorCode::kTimeout : ErrorCode::kBackendFailed;
  if (peer) {
    return Status::Error(code, "peer \"" + target.peer + "\" (" + target.url->origin +
                                   target.url->path_prefix + "), model \"" + target.id +
                                   "\": " + what);
  }
  ctx.WillBlock();  // the describer may wait for the Router to notice an exit
  Status described = describe_failure_(target.id, what);
  return head_limit ? Status::Error(code, described.message()) : described;
}

}  // namespace swapd
