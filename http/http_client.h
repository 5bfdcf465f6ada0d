// HttpClient: swapd's own one-shot HTTP requests to a server it does not proxy for (a backend's
// readiness check and slot cache, a peer's health check, `swapd bench`'s calls): connect, send
// one request, read the answer, close. Built on UpstreamConnection, so it speaks TCP or TLS as the
// URL says (https:// only: TLS is set up on its first use), with the same timeouts and the same
// failure texts as the proxy ("Connection refused (127.0.0.1:5800)", "read timed out"). The answer
// comes back whole (Fetch) or piece by piece as it arrives (Stream, for a server-sent event
// stream). Blocking, on the caller's thread. The proxy does not use it: it keeps its connections
// alive in UpstreamClientPool and hands the answer on to a client.
// Thread safe: the methods are const and each call opens its own connection, so one HttpClient
// may serve several threads at once.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "base/proxy_url.h"
#include "http/message.h"
#include "http/upstream_connection.h"

namespace swapd {

struct ClientRequest {
  std::string method = "GET";
  // Path and query; the request goes to the URL's path prefix plus this ("http://h:8000/v1" and
  // "/models" ask for /v1/models).
  std::string target = "/";
  // Sent as they are, except Host, Content-Length, Transfer-Encoding and Connection, which the
  // client writes itself (the body goes whole, and the connection closes after the answer).
  HttpHeaders headers;
  std::string body;
};

struct ClientResponse {
  int status = 0;
  HttpHeaders headers;
  std::string body;  // empty when the body went to a Stream callback
};

class HttpClient {
 public:
  // The head of the answer (`head.body` is empty); false ends the exchange.
  using HeadHandler = std::function<bool(const ClientResponse& head)>;
  // One piece of the body, as it arrived; false ends the exchange.
  using BodyHandler = std::function<bool(std::string_view piece)>;

  // Fetch refuses a body larger than this by default.
  static constexpr size_t kDefaultMaxBody = size_t{64} << 20;

  // Requests go to `url` (origin and path prefix) within `timeouts` (connect, TLS handshake,
  // write, and read: the server's longest silence).
  explicit HttpClient(ProxyUrl url, UpstreamConnection::Timeouts timeouts = {});

  // A call gives up waiting for the answer once `*stop` is true (looked at about every second
  // while it waits; a connect runs to its timeout). Null: never. Not owned; it must outlive the
  // calls.
  void set_stop(const std::atomic<bool>* stop) { stop_ = stop; }
  void set_max_body(size_t bytes) { max_body_ = bytes; }

  const ProxyUrl& url() const { return url_; }

  // Sends `request` and reads the whole answer into `response`, whatever its status. False when
  // no whole answer came (`failure` says why: no connection, a timeout, a malformed or cut
  // answer, a body over the limit, the stop flag).
  bool Fetch(const ClientRequest& request, ClientResponse& response,
             UpstreamFailure& failure) const;

  // Sends `request`, calls `on_head` once the answer's head has arrived, then `on_body` with each
  // piece of the body as it arrives (either may be empty). True once the body was read whole;
  // false when it was not, and when a handler returned false (failure kind kClientGone).
  bool Stream(const ClientRequest& request, const HeadHandler& on_head, const BodyHandler& on_body,
              UpstreamFailure& failure) const;

 private:
  ProxyUrl url_;
  UpstreamConnection::Timeouts timeouts_;
  const std::atomic<bool>* stop_ = nullptr;
  size_t max_body_ = kDefaultMaxBody;
};

}  // namespace swapd
