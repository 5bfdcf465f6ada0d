#include "frontdoor/upstream_proxy.h"

#include "base/proxy_url.h"
#include "frontdoor/error_response.h"
#include "http/request_context.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;
using Kind = UpstreamFailure::Kind;

}  // namespace

// One request's exchange with its backend, shared by Forward and what outlives it: a deferred
// step waiting for the answer, or the content provider of a streamed answer. Used by one thread
// at a time.
struct UpstreamProxy::Exchange {
  UpstreamProxy* proxy;  // outlives every response (the HTTP server stops first)
  Lease lease;
  std::string origin;
  std::unique_ptr<UpstreamConnection> connection;
  bool head_request = false;
  bool head_seen = false;  // the answer's head has been read (into `start`)
  bool finished = false;   // the body was passed on whole (or its failure reported)
  ResponseStart start;
  ResponseHead head;  // what the client's response takes of `start`
  std::string body;   // a buffered answer, as far as it has come
  UsageScanner scanner{false};
  ProxyRecord record;
  Clock::time_point start_time = Clock::now();

  Exchange(UpstreamProxy* p, Lease l, std::string_view route) : proxy(p), lease(std::move(l)) {
    record.model_id = lease.model_id();
    record.route = route;
  }
  ~Exchange() {
    if (!proxy) return;  // discarded: the retry is the request that counts
    Done();
    record.usage = scanner.Finish();
    record.duration = Clock::now() - start_time;
    if (proxy->on_record_) proxy->on_record_(record);
  }

  // The backend's part is over: the connection goes back to the pool (if it is reusable)
  // before the client sees the end of the answer, so that the client's next request finds it,
  // and the lease ends.
  void Done() {
    if (connection) proxy->connections_.GiveBack(origin, std::move(connection));
    lease.Release();
  }

  // The next piece of the body into `piece` (empty once complete); false, with the client's
  // error in `failure`, when the backend fails, or with *would_block set (see ReadBody).
  bool Read(std::string_view& piece, bool& done, Status& failure, RequestContext& ctx,
            bool* would_block = nullptr) {
    UpstreamFailure why;
    if (connection->ReadBody(piece, done, why, ctx, would_block)) {
      record.bytes += piece.size();
      scanner.Feed(piece);
      return true;
    }
    if (would_block != nullptr && *would_block) return false;
    connection.reset();
    if (why.kind == Kind::kClientGone) {
      record.client_gone = true;
      failure = Status::Error(ErrorCode::kUnavailable, why.text);
      return false;
    }
    record.upstream_failed = true;
    failure = proxy->Describe(record.model_id, head_seen, why, ctx);
    return false;
  }

  // The exchange failed: `res` gets the client's error.
  DeferredStep Fail(HttpResponse& res, const UpstreamFailure& why, RequestContext& ctx) {
    // Closing the connection tells the backend to stop (llama-server cancels the task).
    connection.reset();
    if (why.kind == Kind::kClientGone) return Abandoned(res);
    record.upstream_failed = true;
    res.headers.Clear();
    SetErrorResponse(res, proxy->Describe(record.model_id, head_seen, why, ctx));
    record.status = res.status;
    return {};
  }

  // The client went away before its answer came (the connection is closed already).
  DeferredStep Abandoned(HttpResponse& res) {
    record.client_gone = true;
    res.headers.Clear();
    res.body.clear();
    res.status = kClientClosedRequest;
    record.status = res.status;
    return {};
  }

  // The rest waits in the server's epoll set until the backend sends more.
  DeferredStep Wait(const std::shared_ptr<Exchange>& self) {
    return {connection->fd(), connection->in_epoll_set(), Clock::now() + proxy->timeouts_.read,
            [self](HttpResponse& res, WaitEnd end, RequestContext& ctx) {
              return self->Continue(self, res, end, ctx);
            }};
  }

  // The answer's head is in `start`: `res` gets its status and headers. False for a streamed
  // answer, whose body the content provider passes on.
  bool Answer(const std::shared_ptr<Exchange>& self, HttpResponse& res) {
    record.time_to_first_byte = Clock::now() - start_time;
    res.status = start.status;
    record.status = start.status;
    head = CopyHeaders(start.headers, res);
    scanner = UsageScanner(head.sse);
    const bool buffered = start.framing == BodyFraming::kNone ||
                          (!head.sse && start.framing == BodyFraming::kLength &&
                           start.content_length <= kMaxBufferedBody);
    if (buffered) {
      body.reserve(static_cast<size_t>(start.content_length));
      return true;
    }
    record.streamed = true;
    res.headers.Set("X-Accel-Buffering", "no");
    res.headers.Set("Cache-Control", "no-cache");
    res.SetStream(
        head.content_type,
        [self](BodyWriter& out, RequestContext& ctx) { return self->Pump(out, ctx); },
        [self](bool) {
          if (!self->finished) self->record.client_gone = true;
        });
    return false;
  }

  // Reads the rest of the answer (the head unless seen, then a buffered body) into `res`. Waits
  // for the backend on the thread, or returns the step that waits in the server's epoll set
  // when the server wants that (RequestContext::ShouldDefer).
  DeferredStep Continue(const std::shared_ptr<Exchange>& self, HttpResponse& res, WaitEnd end,
                        RequestContext& ctx) {
    if (end == WaitEnd::kTimedOut) return Fail(res, {Kind::kTimeout, "read timed out"}, ctx);
    if (end == WaitEnd::kClientGone) {
      return Fail(res, {Kind::kClientGone, "the client went away"}, ctx);
    }
    bool would_block = false;
    bool* no_wait = connection->can_defer() && ctx.ShouldDefer() ? &would_block : nullptr;
    if (!head_seen) {
      UpstreamFailure failure;
      if (!connection->ReadHead(head_request, start, failure, ctx, no_wait)) {
        return would_block ? Wait(self) : Fail(res, failure, ctx);
      }
      head_seen = true;
      if (!Answer(self, res)) return {};
    }
    for (bool done = false; !done;) {
      std::string_view piece;
      Status failed;
      if (!Read(piece, done, failed, ctx, no_wait)) {
        if (would_block) return Wait(self);
        if (record.client_gone) return Abandoned(res);
        res.headers.Clear();
        SetErrorResponse(res, failed);
        record.status = res.status;
        return {};
      }
      body.append(piece);
    }
    Done();
    // Moved, not set_content (which copies); a backend's answer without Content-Type (a 204)
    // gets none from us either.
    res.body = std::move(body);
    if (!head.content_type.empty()) res.headers.Set("Content-Type", head.content_type);
    if (head_request && start.has_length) {
      res.headers.Set("Content-Length", std::to_string(start.content_length));
    }
    return {};
  }

  // The BodyStream of a streamed answer: passes on one piece per call.
  bool Pump(BodyWriter& out, RequestContext& ctx) {
    std::string_view piece;
    bool done = false;
    Status failure;
    if (!Read(piece, done, failure, ctx)) {
      finished = true;
      if (!head.sse || record.client_gone) return false;  // the transfer breaks off
      out.Write(ErrorEvent(failure));
      out.End();
      return true;
    }
    if (done) {
      finished = true;
      Done();
      out.End();
      return true;
    }
    if (out.Write(piece)) return true;
    record.client_gone = true;  // closing the connection stops the backend's generation
    connection.reset();
    return false;
  }
};

UpstreamProxy::UpstreamProxy(FailureDescriber describe_failure, RecordSink on_record,
                             std::chrono::seconds idle_timeout)
    : describe_failure_(std::move(describe_failure)),
      on_record_(std::move(on_record)),
      timeouts_{std::chrono::seconds(10), idle_timeout, std::chrono::minutes(5)} {}

UpstreamProxy::~UpstreamProxy() = default;

Status UpstreamProxy::Describe(const std::string& model_id, bool headers_seen,
                               const UpstreamFailure& failure, RequestContext& ctx) const {
  std::string what;
  if (failure.kind == Kind::kTimeout) {
    what = std::string(headers_seen ? "the backend's response stalled"
                                    : "the backend did not answer") +
           ": nothing for " + std::to_string(timeouts_.read.count()) +
           " s (--upstream-idle-timeout)";
  } else if (failure.kind == Kind::kRefused || failure.kind == Kind::kConnect) {
    what = "could not reach the backend: " + failure.text;
  } else {
    what = (headers_seen ? "the backend's response broke off: " : "the backend did not answer: ") +
           failure.text;
  }
  ctx.WillBlock();  // the describer may wait for the Router to notice an exit
  return describe_failure_(model_id, what);
}

std::unique_ptr<UpstreamConnection> UpstreamProxy::Open(const ProxyUrl& url,
                                                        const std::string& head,
                                                        std::string_view body, bool head_request,
                                                        bool idempotent, RequestContext& ctx,
                                                        ResponseStart& start, bool& head_pending,
                                                        UpstreamFailure& failure) {
  const bool may_defer = ctx.ShouldDefer();
  for (int attempt = 0; attempt < 2; ++attempt) {
    failure = UpstreamFailure();
    std::unique_ptr<UpstreamConnection> connection =
        attempt == 0 ? connections_.Take(url.origin) : nullptr;
    const bool reused = connection != nullptr;
    if (!reused) connection = UpstreamConnection::Open(url, timeouts_, failure);
    if (!connection) return nullptr;
    const bool sent = connection->Send(head, body, failure);
    // The answer is awaited in the server's epoll set, unless it may have to be sent again (see
    // below), which needs the request.
    head_pending = sent && may_defer && connection->can_defer() && !(reused && idempotent);
    if (head_pending || (sent && connection->ReadHead(head_request, start, failure, ctx))) {
      return connection;
    }
    // A reused connection that could not take the request, or that closed without a byte of
    // answer to a request that may safely be sent twice, was most likely closed by the backend
    // while it sat idle: the request goes once more on a new one. Not a POST the backend may
    // have received: if that killed it, sending it again would restart the model for a request
    // that kills it again (and a backend that dies gets a 502 naming its exit).
    if (!reused || connection->received_any() || failure.kind == Kind::kTimeout ||
        failure.kind == Kind::kClientGone || (sent && !idempotent)) {
      return nullptr;
    }
  }
  return nullptr;
}

UpstreamProxy::Delivery UpstreamProxy::Forward(Lease lease, const ProxyRequest& request,
                                               HttpResponse& res, RequestContext& ctx,
                                               bool may_retry) {
  auto ex = std::make_shared<Exchange>(this, std::move(lease), request.route);
  const ProxyUrl& url = ex->lease.proxy_url();
  ex->origin = url.origin;
  ex->head_request = request.method == "HEAD";
  UpstreamFailure failure;
  const bool idempotent =
      request.method == "GET" || request.method == "HEAD" || request.method == "OPTIONS";
  bool head_pending = false;
  ex->connection = Open(url, UpstreamRequestHead(url, request), request.body, ex->head_request,
                        idempotent, ctx, ex->start, head_pending, failure);
  if (!ex->connection) {
    if (may_retry && failure.kind == Kind::kRefused) {
      ex->lease.Release();
      ex->proxy = nullptr;
      return Delivery::kRefused;
    }
    ex->Fail(res, failure, ctx);
    return Delivery::kDone;
  }
  if (head_pending) {
    ctx.Defer(ex->Wait(ex));
    return Delivery::kDone;
  }
  ex->head_seen = true;
  if (!ex->Answer(ex, res)) return Delivery::kDone;  // streamed
  DeferredStep rest = ex->Continue(ex, res, WaitEnd::kReady, ctx);
  // Continue asks the server again: more requests may be in flight by now.
  if (!rest.done()) ctx.Defer(std::move(rest));
  return Delivery::kDone;
}

}  // namespace swapd
