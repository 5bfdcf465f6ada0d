// One proxied request, top-down: Forward sends the request (Exchange::Send), then the answer's
// head arrives (at once, or in a deferred step: AwaitHead), and OnHead takes one of two paths:
// the whole-answer path (ReadWholeAnswer: the body into the response, then the response is
// written) or the streamed path (StreamAnswer: the server writes the body as Pump reads it).
#include "frontdoor/upstream_proxy.h"

#include "base/proxy_url.h"
#include "frontdoor/error_response.h"
#include "frontdoor/inflight_table.h"
#include "http/request_context.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;
using Kind = UpstreamFailure::Kind;

bool IsJson(std::string_view content_type) {
  return content_type.find("json") != std::string_view::npos;
}

bool Idempotent(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS";
}

}  // namespace

// One request's exchange with its backend, shared by Forward and what outlives it: a deferred
// step waiting for the answer, or the BodyStream of a streamed answer. Used by one thread at a
// time. Its destructor records the exchange (ProxyRecord).
struct UpstreamProxy::Exchange : std::enable_shared_from_this<Exchange> {
  UpstreamProxy* proxy;  // outlives every response (the HTTP server stops first)
  UpstreamTarget target;
  const bool head_request;
  std::unique_ptr<UpstreamConnection> connection;
  bool head_seen = false;  // the answer's head has been read (into `start`)
  bool finished = false;   // the body was passed on whole (or its failure reported)
  ResponseStart start;
  ResponseHead head;  // what the client's response takes of `start`
  std::string body;   // a whole answer, as far as it has come
  UsageScanner scanner{false};
  ProxyRecord record;
  Clock::time_point start_time = Clock::now();
  // The request's in-flight entry (null when untracked); held until the exchange ends.
  std::shared_ptr<InflightRequest> inflight;
  CaptureBuilder capture;  // a no-op unless captures are on

  Exchange(UpstreamProxy* p, UpstreamTarget t, const ProxyRequest& request)
      : proxy(p),
        target(std::move(t)),
        head_request(request.method == "HEAD"),
        inflight(request.inflight),
        capture(request.capture_limit, request.path, request.headers, request.client_body) {
    record.model_id = target.id;
    record.peer = target.peer;
    record.route = request.route;
    record.path = request.path;
  }
  ~Exchange() {
    if (!proxy) return;  // discarded: the retry is the request that counts
    Done();
    record.usage = scanner.Finish();
    record.duration = Clock::now() - start_time;
    record.capture = capture.Finish(record.status);
    if (proxy->on_record_) proxy->on_record_(record);
  }

  // Nothing was sent: the exchange ends unrecorded, for the caller to retry.
  void Discard() {
    target.lease.Release();
    proxy = nullptr;
  }

  enum class Sent {
    kFailed,       // `failure` says why; nothing to read
    kHeadRead,     // the answer's head is in `start`
    kHeadPending,  // sent; the head is to be awaited in the server's epoll set (AwaitHead)
  };
  // Sends the request, on an idle pooled connection when there is one, and reads the answer's
  // head unless the server wants the wait in its epoll set.
  Sent Send(std::string_view request_head, std::string_view request_body, bool idempotent,
            RequestContext& ctx, UpstreamFailure& failure) {
    const bool may_defer = ctx.ShouldDefer();
    for (int attempt = 0; attempt < 2; ++attempt) {
      failure = UpstreamFailure();
      CloseConnection();
      connection = attempt == 0 ? proxy->connections_.Take(target.url.origin) : nullptr;
      const bool reused = connection != nullptr;
      if (!reused) connection = UpstreamConnection::Open(target.url, target.timeouts, failure);
      if (!connection) {
        record.unreachable = true;
        return Sent::kFailed;
      }
      if (inflight) inflight->SetSocket(connection->fd());
      const bool sent = connection->Send(request_head, request_body, failure);
      // The answer is awaited in the server's epoll set, unless it may have to be sent again
      // (see below), which needs the request.
      if (sent && may_defer && connection->can_defer() && !(reused && idempotent)) {
        return Sent::kHeadPending;
      }
      if (sent && connection->ReadHead(head_request, start, failure, ctx)) return Sent::kHeadRead;
      // A reused connection that could not take the request, or that closed without a byte of
      // answer to a request that may safely be sent twice, was most likely closed by the
      // backend while it sat idle: the request goes once more on a new one. Not a POST the
      // backend may have received: if that killed it, sending it again would restart the model
      // for a request that kills it again (and a backend that dies gets a 502 naming its exit).
      if (!reused || connection->received_any() || failure.kind == Kind::kTimeout ||
          failure.kind == Kind::kClientGone || (sent && !idempotent)) {
        break;
      }
    }
    CloseConnection();
    return Sent::kFailed;
  }

  // Closes the connection to the backend (which stops its work), if open.
  void CloseConnection() {
    if (inflight) inflight->SetSocket(-1);
    connection.reset();
  }

  // Whether the request was cancelled (POST /api/inflight/{id}/cancel).
  bool Cancelled() const { return inflight && inflight->cancelled(); }

  // A deferred step: `step` runs once the backend's socket is readable (or the wait ended).
  DeferredStep Wait(DeferredStep (Exchange::*step)(HttpResponse&, WaitEnd, RequestContext&)) {
    const auto limit = head_seen ? target.timeouts.read : target.timeouts.HeadLimit();
    return {connection->fd(), connection->in_epoll_set(), Clock::now() + limit,
            [self = shared_from_this(), step](HttpResponse& res, WaitEnd end, RequestContext& ctx) {
              return ((*self).*step)(res, end, ctx);
            }};
  }

  // Where reads may stop instead of waiting (a deferred step then goes on), or null.
  bool* NoWait(bool& would_block, RequestContext& ctx) {
    return connection->can_defer() && ctx.ShouldDefer() ? &would_block : nullptr;
  }

  // The deferred step that waits for the answer's head.
  DeferredStep AwaitHead(HttpResponse& res, WaitEnd end, RequestContext& ctx) {
    if (end != WaitEnd::kReady) return Ended(res, end, ctx);
    bool would_block = false;
    UpstreamFailure failure;
    if (!connection->ReadHead(head_request, start, failure, ctx, NoWait(would_block, ctx))) {
      return would_block ? Wait(&Exchange::AwaitHead) : Fail(res, failure, ctx);
    }
    return OnHead(res, ctx);
  }

  // The answer's head is in `start`: `res` gets its status and headers, and the body takes one
  // of the two paths. Not SSE and a known length up to kMaxBufferedBody (or no body): read
  // whole first, so that a backend that fails mid-body still becomes a clean 502 JSON error.
  // Anything else is streamed.
  DeferredStep OnHead(HttpResponse& res, RequestContext& ctx) {
    head_seen = true;
    record.time_to_first_byte = Clock::now() - start_time;
    res.status = start.status;
    record.status = start.status;
    head = CopyHeaders(start.headers, res);
    if (inflight) inflight->SetResponseHeaders(start.headers);
    record.content_type = head.content_type;
    scanner = UsageScanner(head.sse);
    const bool whole = start.framing == BodyFraming::kNone ||
                       (!head.sse && start.framing == BodyFraming::kLength &&
                        start.content_length <= kMaxBufferedBody);
    if (!whole) {
      StreamAnswer(res);
      capture.SetResponseHeaders(res.headers, head.content_type);
      return {};
    }
    body.reserve(static_cast<size_t>(start.content_length));
    return ReadWholeAnswer(res, WaitEnd::kReady, ctx);
  }

  // The whole-answer path: reads the body into `body` (waiting for the backend on the thread,
  // or in deferred steps), then `res` gets it.
  DeferredStep ReadWholeAnswer(HttpResponse& res, WaitEnd end, RequestContext& ctx) {
    if (end != WaitEnd::kReady) return Ended(res, end, ctx);
    bool would_block = false;
    bool* no_wait = NoWait(would_block, ctx);
    for (bool done = false; !done;) {
      std::string_view piece;
      Status failed;
      if (!Read(piece, done, failed, ctx, no_wait)) {
        if (would_block) return Wait(&Exchange::ReadWholeAnswer);
        if (record.client_gone) return Abandoned(res);
        if (Cancelled()) return CancelledAnswer(res);
        return AnswerError(res, failed);
      }
      body.append(piece);
    }
    Done();
    if (!target.peer.empty() && start.status >= 400 && !IsJson(head.content_type)) {
      return PeerErrorAnswer(res);
    }
    // Moved, not copied; a backend's answer without Content-Type (a 204) gets none from us
    // either.
    res.body = std::move(body);
    if (!head.content_type.empty()) res.headers.Set("Content-Type", head.content_type);
    if (head_request && start.has_length) {
      res.headers.Set("Content-Length", std::to_string(start.content_length));
    }
    capture.SetResponseHeaders(res.headers, head.content_type);
    return {};
  }

  // A peer's error answer that is not JSON (an HTML page of a gateway, a text line): the client
  // gets a JSON error with the peer's status, naming the peer, with the start of its text.
  DeferredStep PeerErrorAnswer(HttpResponse& res) {
    constexpr size_t kShown = 300;
    std::string text = body.substr(0, kShown);
    for (char& c : text) {
      if (c == '\r' || c == '\n' || c == '\t') c = ' ';
    }
    const int status = start.status;
    AnswerError(res, Status::Error(ErrorCode::kBackendFailed,
                                   "peer \"" + target.peer + "\" answered HTTP " +
                                       std::to_string(status) + (text.empty() ? "" : ": " + text) +
                                       (body.size() > kShown ? "..." : "")));
    res.status = record.status = status;
    return {};
  }

  // The streamed path: the server writes the body as Pump reads it; the exchange lives as long
  // as the response's stream.
  void StreamAnswer(HttpResponse& res) {
    record.streamed = true;
    res.headers.Set("X-Accel-Buffering", "no");
    res.headers.Set("Cache-Control", "no-cache");
    auto self = shared_from_this();
    res.SetStream(
        head.content_type,
        [self](BodyWriter& out, RequestContext& ctx) { return self->Pump(out, ctx); },
        [self](bool) {
          if (!self->finished) self->record.client_gone = true;
        });
  }

  // Passes on one piece of a streamed body per call. A backend that fails mid-stream ends an SSE
  // stream with an error event; any other body is cut short (the client sees a broken transfer
  // rather than a truncated success).
  bool Pump(BodyWriter& out, RequestContext& ctx) {
    std::string_view piece;
    bool done = false;
    Status failure;
    if (!Read(piece, done, failure, ctx)) {
      finished = true;
      if (!head.sse || record.client_gone) return false;  // the transfer breaks off
      const std::string event = ErrorEvent(failure);
      capture.AddResponseBytes(event);
      out.Write(event);
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
    record.error = "the client closed the connection";
    CloseConnection();
    return false;
  }

  // The next piece of the body into `piece` (empty once complete); false, with the client's
  // error in `failure`, when the backend fails, or with *would_block set (see ReadBody).
  bool Read(std::string_view& piece, bool& done, Status& failure, RequestContext& ctx,
            bool* would_block = nullptr) {
    UpstreamFailure why;
    if (connection->ReadBody(piece, done, why, ctx, would_block)) {
      record.bytes += piece.size();
      if (inflight) inflight->AddResponseBytes(piece.size());
      scanner.Feed(piece);
      capture.AddResponseBytes(piece);
      return true;
    }
    if (would_block != nullptr && *would_block) return false;
    CloseConnection();
    if (Cancelled()) {
      // The cancel shut the socket down: the client is told, and an event stream ends with it.
      failure = Status::Error(ErrorCode::kUnavailable, inflight->CancelledMessage());
      record.error = failure.message();
      return false;
    }
    if (why.kind == Kind::kClientGone) {
      record.client_gone = true;
      failure = Status::Error(ErrorCode::kUnavailable, why.text);
      return false;
    }
    record.upstream_failed = true;
    failure = proxy->Describe(target, head_seen, why, ctx);
    record.error = failure.message();
    return false;
  }

  // The backend's part is over: the connection goes back to the pool (if it is reusable)
  // before the client sees the end of the answer, so that the client's next request finds it,
  // and the lease ends.
  void Done() {
    if (connection) {
      if (inflight) inflight->SetSocket(-1);
      proxy->connections_.GiveBack(target.url.origin, std::move(connection), target.idle_conn);
    }
    target.lease.Release();
  }

  // A deferred wait ended without the backend's bytes: its deadline passed, or the client left.
  DeferredStep Ended(HttpResponse& res, WaitEnd end, RequestContext& ctx) {
    if (end == WaitEnd::kTimedOut) return Fail(res, {Kind::kTimeout, "read timed out"}, ctx);
    return Fail(res, {Kind::kClientGone, "the client went away"}, ctx);
  }

  // The exchange failed: `res` gets the client's error.
  DeferredStep Fail(HttpResponse& res, const UpstreamFailure& why, RequestContext& ctx) {
    // Closing the connection tells the backend to stop (llama-server cancels the task).
    CloseConnection();
    if (why.kind == Kind::kClientGone) return Abandoned(res);
    if (Cancelled()) return CancelledAnswer(res);
    record.upstream_failed = true;
    return AnswerError(res, proxy->Describe(target, head_seen, why, ctx));
  }

  // `res` becomes the error swapd answers with, and the record says so.
  DeferredStep AnswerError(HttpResponse& res, const Status& error) {
    res.headers.Clear();
    SetErrorResponse(res, error);
    capture.SetResponseHeaders(res.headers, "");
    record.status = res.status;
    record.error = error.message();
    record.content_type = std::string(res.headers.Get("Content-Type"));
    return {};
  }

  // The request was cancelled before its answer came (the connection is closed already): 499
  // with a JSON error (not a 5xx, which clients such as the openai SDK send again).
  DeferredStep CancelledAnswer(HttpResponse& res) {
    AnswerError(res, Status::Error(ErrorCode::kUnavailable, inflight->CancelledMessage()));
    res.status = record.status = kClientClosedRequest;
    return {};
  }

  // The client went away before its answer came (the connection is closed already).
  DeferredStep Abandoned(HttpResponse& res) {
    record.client_gone = true;
    res.headers.Clear();
    res.body.clear();
    res.status = kClientClosedRequest;
    record.status = res.status;
    record.error = "the client closed the connection";
    return {};
  }
};

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
  const std::string head = UpstreamRequestHead(ex->target.url, request);
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
    return Status::Error(code, "peer \"" + target.peer + "\" (" + target.url.origin +
                                   target.url.path_prefix + "), model \"" + target.id +
                                   "\": " + what);
  }
  ctx.WillBlock();  // the describer may wait for the Router to notice an exit
  Status described = describe_failure_(target.id, what);
  return head_limit ? Status::Error(code, described.message()) : described;
}

}  // namespace swapd
