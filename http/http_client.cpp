#include "http/http_client.h"

#include "http/http1_syntax.h"
#include "http/request_context.h"

namespace swapd {
namespace {

using Kind = UpstreamFailure::Kind;

// The caller's stop flag, as the connection's reads see it.
class StopContext final : public RequestContext {
 public:
  explicit StopContext(const std::atomic<bool>* stop) : stop_(stop) {}
  bool ShouldDefer() const override { return false; }
  void Defer(DeferredStep) override {}
  void WillBlock() override {}
  bool ClientGone() const override { return stop_ != nullptr && stop_->load(); }

 private:
  const std::atomic<bool>* const stop_;
};

bool IsHttpUrl(const ProxyUrl& url) {
  return (url.origin.rfind("http://", 0) == 0 || url.origin.rfind("https://", 0) == 0) &&
         !url.host.empty();
}

bool WrittenByClient(std::string_view name) {
  return EqualsIgnoreCase(name, "Host") || EqualsIgnoreCase(name, "Content-Length") ||
         EqualsIgnoreCase(name, "Transfer-Encoding") || EqualsIgnoreCase(name, "Connection");
}

// One request per connection: the server need not keep it (nor a thread) for another.
std::string ClientRequestHead(const ProxyUrl& url, const ClientRequest& request) {
  return FormatRequestHead(url, request.method, request.target, "Connection: close\r\n",
                           request.headers, WrittenByClient, request.body.size());
}

std::string SizeText(size_t bytes) {
  constexpr size_t kMiB = size_t{1} << 20;
  return bytes % kMiB == 0 && bytes > 0 ? std::to_string(bytes / kMiB) + " MiB"
                                        : std::to_string(bytes) + " bytes";
}

}  // namespace

HttpClient::HttpClient(ProxyUrl url, UpstreamConnection::Timeouts timeouts)
    : url_(std::move(url)), timeouts_(timeouts) {}

bool HttpClient::Stream(const ClientRequest& request, const HeadHandler& on_head,
                        const BodyHandler& on_body, UpstreamFailure& failure) const {
  failure = {};
  if (!IsHttpUrl(url_)) {
    return failure.Fail(Kind::kConnect, "not an http:// or https:// URL: \"" + url_.origin +
                                            url_.path_prefix + "\"");
  }
  StopContext context(stop_);
  // The connection reports the flag as its client gone; here the client is the caller.
  auto stopped = [&] {
    if (failure.kind == Kind::kClientGone) failure.text = "stopped";
    return false;
  };
  if (context.ClientGone()) return failure.Fail(Kind::kClientGone, "stopped");
  std::unique_ptr<UpstreamConnection> connection =
      UpstreamConnection::Open(url_, timeouts_, failure);
  if (!connection) return false;
  ResponseStart start;
  if (!connection->Send(ClientRequestHead(url_, request), request.body, failure) ||
      !connection->ReadHead(request.method == "HEAD", start, failure, context)) {
    return stopped();
  }
  ClientResponse head;
  head.status = start.status;
  // Copied now: the fields point into the connection's buffer, which the next read reuses.
  for (const HeaderField& field : start.headers) {
    head.headers.Add(std::string(field.name), std::string(field.value));
  }
  if (on_head && !on_head(head)) return failure.Fail(Kind::kClientGone, "cancelled");
  for (bool done = false; !done;) {
    std::string_view piece;
    if (!connection->ReadBody(piece, done, failure, context)) return stopped();
    if (!piece.empty() && on_body && !on_body(piece)) {
      return failure.Fail(Kind::kClientGone, "cancelled");
    }
  }
  return true;
}

bool HttpClient::Fetch(const ClientRequest& request, ClientResponse& response,
                       UpstreamFailure& failure) const {
  response = {};
  bool too_large = false;
  const bool whole = Stream(
      request,
      [&response](const ClientResponse& head) {
        response.status = head.status;
        response.headers = head.headers;
        return true;
      },
      [&](std::string_view piece) {
        if (piece.size() > max_body_ - response.body.size()) {
          too_large = true;
          return false;
        }
        response.body.append(piece);
        return true;
      },
      failure);
  if (too_large) {
    return failure.Fail(Kind::kMalformed,
                        "the answer's body is larger than " + SizeText(max_body_));
  }
  return whole;
}

}  // namespace swapd
