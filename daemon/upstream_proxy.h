// UpstreamProxy: forwards one client request to the backend behind a Lease and streams the answer
// back. Two paths:
//  - Buffered, on the calling thread: a request to a JSON route (chat/completions, completions,
//    embeddings, ...) whose body does not ask for `"stream": true`. The exchange runs inline (no
//    hand-off to another thread) and the answer is buffered whole, up to kMaxInlineBody; a larger
//    answer becomes a 502 that says to ask for a stream. A backend that answers SSE anyway is
//    forwarded buffered (its events arrive at once); if it breaks off, the events received are
//    forwarded and end with an error event, as on the streaming path.
//  - Streaming, everything else: status and headers come first, then the body chunk by chunk as
//    it arrives (SSE is never buffered). The upstream exchange runs on the proxy's own worker pool;
//    once the HTTP server's thread has sent the headers and waits in its content provider, the
//    upstream thread writes each chunk to the client itself (before that, a queue bounded at
//    1 MiB holds them). A slow client thus slows the backend instead of growing memory; a client
//    that goes away cancels the upstream request.
// On both paths a backend that fails mid-stream ends an SSE stream with an error event, and a
// failed non-SSE answer of known length (at most 16 MiB) becomes a 502 with a JSON error body.
// Thread safe.
#pragma once

#include <httplib.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "backends/router.h"
#include "daemon/proxy_message.h"
#include "daemon/thread_pool.h"
#include "daemon/upstream_client_pool.h"
#include "daemon/usage_scanner.h"

namespace swapd {

// What happened to one proxied request, for logs and metrics.
struct ProxyRecord {
  std::string model_id;
  int status = 0;
  bool streamed = false;
  bool client_gone = false;
  bool upstream_failed = false;
  std::chrono::steady_clock::duration time_to_first_byte{};
  std::chrono::steady_clock::duration duration{};
  uint64_t bytes = 0;
  Usage usage;
};

class UpstreamProxy {
 public:
  // Turns a transport failure ("connection refused", "read error") into the Status the client
  // sees, e.g. adding the backend's exit status and last log lines.
  using FailureDescriber = std::function<Status(const std::string& model_id, const std::string&)>;
  using RecordSink = std::function<void(const ProxyRecord&)>;

  // `idle_timeout`: a backend that sends nothing for this long fails the request.
  UpstreamProxy(FailureDescriber describe_failure, RecordSink on_record,
                std::chrono::seconds idle_timeout = std::chrono::hours(2));
  ~UpstreamProxy();

  // A non-streamed answer larger than this (on the buffered path) is refused with a 502.
  static constexpr size_t kMaxInlineBody = 64u << 20;

  enum class Delivery {
    kDone,     // `res` holds the answer or the error
    kRefused,  // the backend refused the connection: nothing was sent, `res` is untouched
  };

  // Returns once `res` has its status and headers (or an error). On the buffered path `res` then
  // holds the whole body and `lease` is released; on the streaming path the body is produced by
  // `res`'s content provider, which holds `lease` until the body is complete or the client left.
  // With `may_retry`, a refused connection returns kRefused (lease released, nothing recorded)
  // so that the caller can start the backend again and retry; otherwise it is a 502.
  Delivery Forward(Lease lease, ProxyRequest request, httplib::Response& res,
                   bool may_retry = false);

  // True when `request` takes the buffered path: its target is a JSON route and its body does
  // not ask for "stream": true. Exposed for tests.
  static bool RunsInline(const ProxyRequest& request);

 private:
  struct Exchange;
  Delivery ForwardInline(Lease lease, ProxyRequest request, httplib::Response& res, bool may_retry);
  Delivery ForwardThreaded(Lease lease, ProxyRequest request, httplib::Response& res,
                           bool may_retry);
  void RunUpstream(const std::shared_ptr<Exchange>& exchange, ProxyRequest request);

  FailureDescriber describe_failure_;
  RecordSink on_record_;
  const std::chrono::seconds idle_timeout_;
  UpstreamClientPool clients_;
  GrowingThreadPool workers_;
};

}  // namespace swapd
