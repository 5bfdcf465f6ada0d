// UpstreamProxy: forwards one client request to the backend behind a Lease and streams the answer
// back. Status and headers come first; then the body chunk by chunk as it arrives (SSE is never
// buffered). The upstream exchange runs on the proxy's own worker pool while the HTTP server's
// thread writes to the client; a bounded queue between them gives back-pressure, so a slow client
// slows the backend instead of growing memory. A client that goes away cancels the upstream
// request. A backend that fails mid-stream ends an SSE stream with an error event; a
// non-streamed response is buffered, so its failure becomes a 502 with a JSON error body.
// Thread safe.
#pragma once

#include <httplib.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "backends/router.h"
#include "daemon/thread_pool.h"
#include "daemon/upstream_client_pool.h"
#include "daemon/usage_scanner.h"

namespace swapd {

struct ProxyRequest {
  std::string method;
  std::string target;        // path and query, as the backend should see them
  httplib::Headers headers;  // the client's; hop-by-hop and swapd's own are removed here
  std::string body;
};

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

  UpstreamProxy(FailureDescriber describe_failure, RecordSink on_record);
  ~UpstreamProxy();

  // Returns once `res` has its status and headers (or an error); the body is then produced by
  // `res`'s content provider, which holds `lease` until the body is complete or the client left.
  void Forward(Lease lease, ProxyRequest request, httplib::Response& res);

 private:
  struct Exchange;
  void RunUpstream(const std::shared_ptr<Exchange>& exchange, ProxyRequest request);

  FailureDescriber describe_failure_;
  RecordSink on_record_;
  UpstreamClientPool clients_;
  GrowingThreadPool workers_;
};

}  // namespace swapd
