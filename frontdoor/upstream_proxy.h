// UpstreamProxy: forwards one client request to the backend behind a Lease, on a pooled
// keep-alive connection (UpstreamConnection), and passes the answer back by one of two paths:
//  - whole: no body, or a body that is not SSE and whose Content-Length is at most
//    kMaxBufferedBody, is read whole before the client gets anything, so that a backend that
//    fails mid-body still becomes a clean 502 JSON error;
//  - streamed: anything else goes to the client piece by piece as it is read (SSE is never
//    buffered); a client that goes away closes the upstream connection, which stops the
//    backend's generation; a backend that fails mid-stream ends an SSE stream with an error event.
// The backend is waited for on the thread that serves the client or, when the server wants it
// (RequestContext::ShouldDefer), in the server's epoll set. Thread safe.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "backends/router.h"
#include "config/config.h"
#include "frontdoor/proxy_message.h"
#include "frontdoor/request_capture.h"
#include "frontdoor/usage_scanner.h"
#include "http/message.h"
#include "http/request_context.h"
#include "http/upstream_client_pool.h"

namespace swapd {

// Where one request goes: a local model's backend, held by its lease, or a peer.
struct UpstreamTarget {
  Lease lease;                          // empty for a peer
  std::string id;                       // the model's id, or the peer's model as "<peer>/<model>"
  std::shared_ptr<const ProxyUrl> url;  // never null
  UpstreamConnection::Timeouts timeouts;
  std::chrono::seconds idle_conn = kModelIdleConn;  // how long idle connections are kept
  std::string peer;                                 // the peer's id; empty for a local model
};

// A model's or peer's `timeouts` as the connection's; `read`: the longest silence
// (--upstream-idle-timeout).
UpstreamConnection::Timeouts ConnectionTimeouts(const TimeoutsConfig& timeouts,
                                                std::chrono::seconds read);

// What happened to one proxied request, for logs and metrics.
struct ProxyRecord {
  std::string model_id;
  std::string route;  // for the request counters: "/v1/chat/completions", "/upstream", ...
  std::string path;   // the client's, without the query
  // Whether llama-swap keeps an activity row (and capture) of the request: a POST to a
  // model-dispatched route, by its own path or through /upstream/<model>/. Not a GET (/props, a
  // load through GET /upstream/<model>/), nor any other /upstream path.
  bool activity = true;
  int status = 0;
  std::string content_type;  // of the answer
  std::string error;         // the message of an error swapd answered with; "" otherwise
  bool streamed = false;
  bool client_gone = false;
  bool upstream_failed = false;
  bool unreachable = false;  // no connection could be made (refused, timed out, TLS failed)
  std::string peer;          // the peer's id when the request went to one
  std::chrono::steady_clock::duration time_to_first_byte{};
  std::chrono::steady_clock::duration duration{};
  uint64_t bytes = 0;
  Usage usage;
  // The request and its answer, when captures are on and it fit in the buffer; null otherwise.
  std::shared_ptr<const RequestCapture> capture;
};

class UpstreamProxy {
 public:
  // Turns a transport failure ("connection refused", "read error") into the Status the client
  // sees, e.g. adding the backend's exit status and last log lines. It may wait a little.
  using FailureDescriber = std::function<Status(const std::string& model_id, const std::string&)>;
  using RecordSink = std::function<void(const ProxyRecord&)>;

  // `describe_failure` is asked about local models only: a peer's failure is described here.
  UpstreamProxy(FailureDescriber describe_failure, RecordSink on_record);
  ~UpstreamProxy();

  // Answers that are not SSE and declare at most this length are buffered (see above).
  static constexpr size_t kMaxBufferedBody = 16u << 20;

  enum class Delivery {
    kDone,     // `res` holds the answer or the error, or a deferred step will complete it
    kRefused,  // the backend refused the connection: nothing was sent, `res` is untouched
  };

  // Returns once `res` has its status and headers (or an error). A whole answer is then in
  // `res` and the target's lease is released; a streamed one is produced by `res`'s BodyStream,
  // which holds the lease until the body is complete or the client left. When the server wants it
  // (ctx.ShouldDefer()), it returns earlier, having handed the wait for the answer to the server
  // (ctx.Defer); the caller then leaves `res` alone. With `may_retry`, a refused connection
  // returns kRefused (lease released, nothing recorded) so that the caller can start the backend
  // again and retry; otherwise it is a 502.
  // A peer's error answer (4xx, 5xx) that is not JSON becomes an OpenAI-shaped JSON error naming
  // the peer, with the start of what it said.
  Delivery Forward(UpstreamTarget target, const ProxyRequest& request, HttpResponse& res,
                   RequestContext& ctx, bool may_retry = false);

 private:
  struct Exchange;
  // The client's error for a failed exchange.
  Status Describe(const UpstreamTarget& target, bool headers_seen, const UpstreamFailure& failure,
                  RequestContext& ctx) const;

  FailureDescriber describe_failure_;
  RecordSink on_record_;
  UpstreamClientPool connections_;
};

}  // namespace swapd
