// UpstreamProxy::Exchange: one request's exchange with its backend (see upstream_proxy.h for the
// two paths an answer takes). Private to upstream_proxy.cpp and upstream_exchange.cpp.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "frontdoor/inflight_table.h"
#include "frontdoor/upstream_proxy.h"
#include "http/request_context.h"

namespace swapd {

// One request's exchange with its backend, shared by Forward and what outlives it: a deferred
// step waiting for the answer, or the BodyStream of a streamed answer. Used by one thread at a
// time. Its destructor records the exchange (ProxyRecord); a whole answer's response keeps it
// until written, so that the record follows the client's answer.
struct UpstreamProxy::Exchange : std::enable_shared_from_this<Exchange> {
  UpstreamProxy* proxy;  // outlives every response (the HTTP server stops first)
  UpstreamTarget target;
  const bool head_request;
  std::unique_ptr<UpstreamConnection> connection;
  bool head_seen = false;  // the answer's head has been read (into `start`)
  bool finished = false;   // the body was passed on whole (or its failure reported)
  ResponseStart start;
  ResponseHead head;   // what the client's response takes of `start`
  bool whole = false;  // the answer takes the whole-answer path
  std::string body;    // a whole answer, as far as it has come
  UsageScanner scanner{false};
  ProxyRecord record;
  std::chrono::steady_clock::time_point start_time = std::chrono::steady_clock::now();
  // The request's in-flight entry (null when untracked); held until the exchange ends.
  std::shared_ptr<InflightRequest> inflight;
  CaptureBuilder capture;  // a no-op unless captures are on
  // The request, while its answer is awaited on a reused connection (deferred): for a second try
  // on a new connection if the backend had closed that one.
  std::string resend;

  Exchange(UpstreamProxy* p, UpstreamTarget t, const ProxyRequest& request);
  ~Exchange();

  // Nothing was sent: the exchange ends unrecorded, for the caller to retry.
  void Discard();

  enum class Sent {
    kFailed,       // `failure` says why; nothing to read
    kHeadRead,     // the answer's head is in `start`
    kHeadPending,  // sent; the head is to be awaited in the server's epoll set (AwaitHead)
  };
  // Sends the request, on an idle pooled connection when there is one, and reads the answer's
  // head unless the server wants the wait in its epoll set. A pooled connection that closes
  // without a byte of answer was closed by the backend while idle (llama-server closes its
  // connection after every streamed answer, a moment after the last chunk): the request goes
  // once more on a new connection, whatever its method.
  Sent Send(std::string_view request_head, std::string_view request_body, bool idempotent,
            RequestContext& ctx, UpstreamFailure& failure);
  // Opens a new connection to the backend (closing the current one); false, the record saying
  // unreachable, when it cannot.
  bool Connect(UpstreamFailure& failure);
  // The connection failed before a byte of answer, not by a timeout, the client's leaving or a
  // cancel.
  bool ClosedUnanswered(const UpstreamFailure& failure) const;

  // Closes the connection to the backend (which stops its work), if open.
  void CloseConnection();

  // Whether the request was cancelled (POST /api/inflight/{id}/cancel).
  bool Cancelled() const { return inflight && inflight->cancelled(); }

  // A deferred step: `step` runs once the backend's socket is readable (or the wait ended).
  DeferredStep Wait(DeferredStep (Exchange::*step)(HttpResponse&, WaitEnd, RequestContext&));

  // Where reads may stop instead of waiting (a deferred step then goes on), or null.
  bool* NoWait(bool& would_block, RequestContext& ctx);

  // The deferred step that waits for the answer's head.
  DeferredStep AwaitHead(HttpResponse& res, WaitEnd end, RequestContext& ctx);

  // The answer's head is in `start`: `res` gets its status and headers, and the body takes one
  // of the two paths. Not SSE and a known length up to kMaxBufferedBody (or no body): read
  // whole first, so that a backend that fails mid-body still becomes a clean 502 JSON error.
  // Anything else is streamed.
  DeferredStep OnHead(HttpResponse& res, RequestContext& ctx);

  // The whole-answer path: reads the body into `body` (waiting for the backend on the thread,
  // or in deferred steps), then `res` gets it.
  DeferredStep ReadWholeAnswer(HttpResponse& res, WaitEnd end, RequestContext& ctx);

  // A peer's error answer that is not JSON (an HTML page of a gateway, a text line): the client
  // gets a JSON error with the peer's status, naming the peer, with the start of its text.
  DeferredStep PeerErrorAnswer(HttpResponse& res);

  // The streamed path: the server writes the body as Pump reads it; the exchange lives as long
  // as the response's stream.
  void StreamAnswer(HttpResponse& res);

  // Passes on one piece of a streamed body per call. A backend that fails mid-stream ends an SSE
  // stream with an error event; any other body is cut short (the client sees a broken transfer
  // rather than a truncated success).
  bool Pump(BodyWriter& out, RequestContext& ctx);

  // The next piece of the body into `piece` (empty once complete); false, with the client's
  // error in `failure`, when the backend fails, or with *would_block set (see ReadBody).
  bool Read(std::string_view& piece, bool& done, Status& failure, RequestContext& ctx,
            bool* would_block = nullptr);

  // The backend's part is over: the connection goes back to the pool (if it is reusable)
  // before the client sees the end of the answer, so that the client's next request finds it,
  // and the lease ends.
  void Done();

  // A deferred wait ended without the backend's bytes: its deadline passed, or the client left.
  DeferredStep Ended(HttpResponse& res, WaitEnd end, RequestContext& ctx);

  // The exchange failed: `res` gets the client's error.
  DeferredStep Fail(HttpResponse& res, const UpstreamFailure& why, RequestContext& ctx);

  // `res` becomes the error swapd answers with, and the record says so.
  DeferredStep AnswerError(HttpResponse& res, const Status& error);

  // The request was cancelled before its answer came (the connection is closed already): 499
  // with a JSON error (not a 5xx, which clients such as the openai SDK send again).
  DeferredStep CancelledAnswer(HttpResponse& res);

  // The client went away before its answer came (the connection is closed already).
  DeferredStep Abandoned(HttpResponse& res);
};

}  // namespace swapd
