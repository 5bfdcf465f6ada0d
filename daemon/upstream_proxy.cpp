#include "daemon/upstream_proxy.h"

#include "config/proxy_url.h"
#include "daemon/http_error.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;
using Kind = UpstreamFailure::Kind;

}  // namespace

// One request's exchange with its backend, shared by Forward and, for a streamed answer, the
// content provider that outlives it. Used by one thread at a time.
struct UpstreamProxy::Exchange {
  UpstreamProxy* proxy;  // outlives every response (the HTTP server stops first)
  Lease lease;
  std::string origin;
  std::unique_ptr<UpstreamConnection> connection;
  bool sse = false;
  bool finished = false;  // the body was passed on whole (or its failure reported)
  UsageScanner scanner{false};
  ProxyRecord record;
  Clock::time_point start = Clock::now();

  Exchange(UpstreamProxy* p, Lease l) : proxy(p), lease(std::move(l)) {
    record.model_id = lease.model_id();
  }
  ~Exchange() {
    if (!proxy) return;  // discarded: the retry is the request that counts
    Done();
    record.usage = scanner.Finish();
    record.duration = Clock::now() - start;
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
  // error in `failure`, when the backend fails.
  bool Read(std::string_view& piece, bool& done, Status& failure) {
    UpstreamFailure why;
    if (connection->ReadBody(piece, done, why)) {
      record.bytes += piece.size();
      scanner.Feed(piece);
      return true;
    }
    connection.reset();
    record.upstream_failed = true;
    failure = proxy->Describe(record.model_id, true, why);
    return false;
  }

  // Content provider of a streamed answer: passes on one piece per call.
  bool Pump(httplib::DataSink& sink) {
    std::string_view piece;
    bool done = false;
    Status failure;
    if (!Read(piece, done, failure)) {
      finished = true;
      if (!sse) return false;  // the client sees the transfer break off
      std::string event = ErrorEvent(failure);
      sink.write(event.data(), event.size());
      sink.done();
      return true;
    }
    if (done) {
      finished = true;
      Done();
      sink.done();
      return true;
    }
    if (sink.write(piece.data(), piece.size())) return true;
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
                               const UpstreamFailure& failure) const {
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
  return describe_failure_(model_id, what);
}

std::unique_ptr<UpstreamConnection> UpstreamProxy::Open(const ProxyUrl& url,
                                                        const std::string& head,
                                                        std::string_view body, bool head_request,
                                                        bool idempotent, ResponseStart& start,
                                                        UpstreamFailure& failure) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    failure = UpstreamFailure();
    std::unique_ptr<UpstreamConnection> connection =
        attempt == 0 ? connections_.Take(url.origin) : nullptr;
    const bool reused = connection != nullptr;
    if (!reused) connection = UpstreamConnection::Open(url, timeouts_, failure);
    if (!connection) return nullptr;
    const bool sent = connection->Send(head, body, failure);
    if (sent && connection->ReadHead(head_request, start, failure)) return connection;
    // A reused connection that could not take the request, or that closed without a byte of
    // answer to a request that may safely be sent twice, was most likely closed by the backend
    // while it sat idle: the request goes once more on a new one. Not a POST the backend may
    // have received: if that killed it, sending it again would restart the model for a request
    // that kills it again (and a backend that dies gets a 502 naming its exit).
    if (!reused || connection->received_any() || failure.kind == Kind::kTimeout ||
        (sent && !idempotent)) {
      return nullptr;
    }
  }
  return nullptr;
}

UpstreamProxy::Delivery UpstreamProxy::Forward(Lease lease, const ProxyRequest& request,
                                               httplib::Response& res, bool may_retry) {
  auto ex = std::make_shared<Exchange>(this, std::move(lease));
  const ProxyUrl& url = ex->lease.proxy_url();
  ex->origin = url.origin;
  ResponseStart start;
  UpstreamFailure failure;
  const bool idempotent =
      request.method == "GET" || request.method == "HEAD" || request.method == "OPTIONS";
  const bool request_is_head = request.method == "HEAD";
  ex->connection = Open(url, UpstreamRequestHead(url, request), request.body, request_is_head,
                        idempotent, start, failure);
  if (!ex->connection) {
    if (may_retry && failure.kind == Kind::kRefused) {
      ex->lease.Release();
      ex->proxy = nullptr;
      return Delivery::kRefused;
    }
    SetErrorResponse(res, Describe(ex->record.model_id, false, failure));
    ex->record.status = res.status;
    ex->record.upstream_failed = true;
    return Delivery::kDone;
  }
  ex->record.time_to_first_byte = Clock::now() - ex->start;
  res.status = start.status;
  ex->record.status = start.status;
  const ResponseHead head = CopyHeaders(start.headers, res);
  ex->sse = head.sse;
  ex->scanner = UsageScanner(head.sse);

  const bool buffered =
      start.framing == BodyFraming::kNone || (!head.sse && start.framing == BodyFraming::kLength &&
                                              start.content_length <= kMaxBufferedBody);
  if (buffered) {
    std::string body;
    body.reserve(static_cast<size_t>(start.content_length));
    Status failed;
    for (bool done = false; !done;) {
      std::string_view piece;
      if (!ex->Read(piece, done, failed)) {
        res.headers.clear();
        SetErrorResponse(res, failed);
        ex->record.status = res.status;
        return Delivery::kDone;
      }
      body.append(piece);
    }
    ex->Done();
    // Moved, not set_content (which copies); a backend's answer without Content-Type (a 204)
    // gets none from us either.
    res.body = std::move(body);
    if (!head.content_type.empty()) res.set_header("Content-Type", head.content_type);
    if (request_is_head && start.has_length) {
      res.set_header("Content-Length", std::to_string(start.content_length));
    }
    return Delivery::kDone;
  }

  ex->record.streamed = true;
  res.set_header("X-Accel-Buffering", "no");
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      head.content_type, [ex](size_t, httplib::DataSink& sink) { return ex->Pump(sink); },
      [ex](bool) {
        if (!ex->finished) ex->record.client_gone = true;
      });
  if (head.content_type.empty()) res.headers.erase("Content-Type");
  return Delivery::kDone;
}

}  // namespace swapd
