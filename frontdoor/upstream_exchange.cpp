// One proxied request, top-down: Forward (upstream_proxy.cpp) sends the request (Send), then the
// answer's head arrives (at once, or in a deferred step: AwaitHead), and OnHead takes one of two
// paths: the whole-answer path (ReadWholeAnswer: the body into the response, then the response is
// written) or the streamed path (StreamAnswer: the server writes the body as Pump reads it).
#include "frontdoor/upstream_exchange.h"

#include "frontdoor/error_response.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;
using Kind = UpstreamFailure::Kind;

bool IsJson(std::string_view content_type) {
  return content_type.find("json") != std::string_view::npos;
}

}  // namespace

UpstreamProxy::Exchange::Exchange(UpstreamProxy* p, UpstreamTarget t, const ProxyRequest& request)
    : proxy(p),
      target(std::move(t)),
      head_request(request.method == "HEAD"),
      inflight(request.inflight),
      capture(request.capture_limit, request.path, request.headers, request.client_body) {
  record.model_id = target.id;
  record.peer = target.peer;
  record.route = request.route;
  record.activity = request.activity;
  record.path = request.path;
  capture.AddResponseBytes(request.capture_prefix);
}

UpstreamProxy::Exchange::~Exchange() {
  if (!proxy) return;  // discarded: the retry is the request that counts
  Done();
  record.usage = scanner.Finish();
  if (record.duration == Clock::duration::zero()) record.duration = Clock::now() - start_time;
  record.capture = capture.Finish(record.status);
  if (proxy->on_record_) proxy->on_record_(record);
}

void UpstreamProxy::Exchange::Discard() {
  target.lease.Release();
  proxy = nullptr;
}

UpstreamProxy::Exchange::Sent UpstreamProxy::Exchange::Send(std::string_view request_head,
                                                            std::string_view request_body,
                                                            bool idempotent, RequestContext& ctx,
                                                            UpstreamFailure& failure) {
  const bool may_defer = ctx.ShouldDefer();
  connection = proxy->connections_.Take(target.url->origin);
  bool reused = connection != nullptr;
  if (reused) {
    if (inflight) inflight->SetSocket(connection->fd());
  } else if (!Connect(failure)) {
    return Sent::kFailed;
  }
  for (;;) {
    const bool sent = connection->Send(request_head, request_body, failure);
    // The answer is awaited in the server's epoll set; on a reused connection with the request
    // kept, for AwaitHead to send it again.
    if (sent && may_defer && connection->can_defer()) {
      if (reused) {
        resend.reserve(request_head.size() + request_body.size());
        resend.assign(request_head).append(request_body);
      }
      return Sent::kHeadPending;
    }
    if (sent && connection->ReadHead(head_request, start, failure, ctx)) return Sent::kHeadRead;
    if (!reused || !ClosedUnanswered(failure)) break;
    const UpstreamFailure first = failure;
    reused = false;
    if (!Connect(failure)) {
      // A POST is not sent once more through a restart of the model: if it was what killed the
      // backend, it would kill it again. Its answer names the backend's exit.
      if (!idempotent) {
        record.unreachable = false;
        failure = first;
      }
      return Sent::kFailed;
    }
    failure = UpstreamFailure();
  }
  CloseConnection();
  return Sent::kFailed;
}

bool UpstreamProxy::Exchange::Connect(UpstreamFailure& failure) {
  CloseConnection();
  connection = UpstreamConnection::Open(*target.url, target.timeouts, failure);
  if (!connection) {
    record.unreachable = true;
    return false;
  }
  if (inflight) inflight->SetSocket(connection->fd());
  return true;
}

bool UpstreamProxy::Exchange::ClosedUnanswered(const UpstreamFailure& failure) const {
  return !connection->received_any() && failure.kind != Kind::kTimeout &&
         failure.kind != Kind::kClientGone && !Cancelled();
}

void UpstreamProxy::Exchange::CloseConnection() {
  if (inflight) inflight->SetSocket(-1);
  connection.reset();
}

DeferredStep UpstreamProxy::Exchange::Wait(DeferredStep (Exchange::*step)(HttpResponse&, WaitEnd,
                                                                          RequestContext&)) {
  const auto limit = head_seen ? target.timeouts.read : target.timeouts.HeadLimit();
  return {connection->fd(), connection->in_epoll_set(), Clock::now() + limit,
          [self = shared_from_this(), step](HttpResponse& res, WaitEnd end, RequestContext& ctx) {
            return ((*self).*step)(res, end, ctx);
          }};
}

bool* UpstreamProxy::Exchange::NoWait(bool& would_block, RequestContext& ctx) {
  return connection->can_defer() && ctx.ShouldDefer() ? &would_block : nullptr;
}

DeferredStep UpstreamProxy::Exchange::AwaitHead(HttpResponse& res, WaitEnd end,
                                                RequestContext& ctx) {
  if (end != WaitEnd::kReady) return Ended(res, end, ctx);
  bool would_block = false;
  UpstreamFailure failure;
  if (!connection->ReadHead(head_request, start, failure, ctx, NoWait(would_block, ctx))) {
    if (would_block) return Wait(&Exchange::AwaitHead);
    if (resend.empty() || !ClosedUnanswered(failure)) return Fail(res, failure, ctx);
    // The reused connection was closed by the backend (see Send): once more on a new one.
    const std::string request = std::move(resend);
    resend = std::string();
    const UpstreamFailure first = failure;
    if (!Connect(failure)) {
      record.unreachable = false;
      return Fail(res, first, ctx);
    }
    if (!connection->Send(request, "", failure)) return Fail(res, failure, ctx);
    return Wait(&Exchange::AwaitHead);
  }
  resend = std::string();
  return OnHead(res, ctx);
}

DeferredStep UpstreamProxy::Exchange::OnHead(HttpResponse& res, RequestContext& ctx) {
  head_seen = true;
  record.time_to_first_byte = Clock::now() - start_time;
  res.status = start.status;
  record.status = start.status;
  head = CopyHeaders(start.headers, res);
  if (inflight) inflight->SetResponseHeaders(start.headers);
  record.content_type = head.content_type;
  scanner = UsageScanner(head.sse);
  whole =
      start.framing == BodyFraming::kNone || (!head.sse && start.framing == BodyFraming::kLength &&
                                              start.content_length <= kMaxBufferedBody);
  if (!whole) {
    StreamAnswer(res);
    capture.SetResponseHeaders(res.headers, head.content_type);
    return {};
  }
  body.reserve(static_cast<size_t>(start.content_length));
  return ReadWholeAnswer(res, WaitEnd::kReady, ctx);
}

DeferredStep UpstreamProxy::Exchange::ReadWholeAnswer(HttpResponse& res, WaitEnd end,
                                                      RequestContext& ctx) {
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
  // One copy each, of the exact size, instead of one grown piece by piece; the scanner's is read
  // by the record, after the client has the answer (scanning it here would delay the answer).
  scanner.Feed(body);
  capture.AddResponseBytes(body);
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
  // The record (this destructor) waits until the client has the answer: the bookkeeping then
  // overlaps the client's next request instead of delaying this one. The backend's part is
  // over (Done): its connection is back in the pool, the lease released.
  record.duration = Clock::now() - start_time;
  res.keep_until_written = shared_from_this();
  return {};
}

DeferredStep UpstreamProxy::Exchange::PeerErrorAnswer(HttpResponse& res) {
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

void UpstreamProxy::Exchange::StreamAnswer(HttpResponse& res) {
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

bool UpstreamProxy::Exchange::Pump(BodyWriter& out, RequestContext& ctx) {
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

bool UpstreamProxy::Exchange::Read(std::string_view& piece, bool& done, Status& failure,
                                   RequestContext& ctx, bool* would_block) {
  UpstreamFailure why;
  if (connection->ReadBody(piece, done, why, ctx, would_block)) {
    record.bytes += piece.size();
    if (inflight) inflight->AddResponseBytes(piece.size());
    if (!whole) {  // a whole answer is read once complete (ReadWholeAnswer)
      scanner.Feed(piece);
      capture.AddResponseBytes(piece);
    }
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

void UpstreamProxy::Exchange::Done() {
  if (connection) {
    if (inflight) inflight->SetSocket(-1);
    proxy->connections_.GiveBack(target.url->origin, std::move(connection), target.idle_conn);
  }
  target.lease.Release();
}

DeferredStep UpstreamProxy::Exchange::Ended(HttpResponse& res, WaitEnd end, RequestContext& ctx) {
  if (end == WaitEnd::kTimedOut) return Fail(res, {Kind::kTimeout, "read timed out"}, ctx);
  return Fail(res, {Kind::kClientGone, "the client went away"}, ctx);
}

DeferredStep UpstreamProxy::Exchange::Fail(HttpResponse& res, const UpstreamFailure& why,
                                           RequestContext& ctx) {
  // Closing the connection tells the backend to stop (llama-server cancels the task).
  CloseConnection();
  if (why.kind == Kind::kClientGone) return Abandoned(res);
  if (Cancelled()) return CancelledAnswer(res);
  record.upstream_failed = true;
  return AnswerError(res, proxy->Describe(target, head_seen, why, ctx));
}

DeferredStep UpstreamProxy::Exchange::AnswerError(HttpResponse& res, const Status& error) {
  res.headers.Clear();
  SetErrorResponse(res, error);
  capture.SetResponseHeaders(res.headers, "");
  record.status = res.status;
  record.error = error.message();
  record.content_type = std::string(res.headers.Get("Content-Type"));
  return {};
}

DeferredStep UpstreamProxy::Exchange::CancelledAnswer(HttpResponse& res) {
  AnswerError(res, Status::Error(ErrorCode::kUnavailable, inflight->CancelledMessage()));
  res.status = record.status = kClientClosedRequest;
  return {};
}

DeferredStep UpstreamProxy::Exchange::Abandoned(HttpResponse& res) {
  record.client_gone = true;
  res.headers.Clear();
  res.body.clear();
  res.status = kClientClosedRequest;
  record.status = res.status;
  record.error = "the client closed the connection";
  return {};
}

}  // namespace swapd
