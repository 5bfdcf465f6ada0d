#include "daemon/upstream_proxy.h"

#include <condition_variable>
#include <deque>
#include <mutex>

#include "config/proxy_url.h"
#include "daemon/http_error.h"
#include "daemon/proxy_message.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

// Bytes a response may queue between the backend and a slow client before the backend waits.
constexpr size_t kMaxQueuedBytes = 1 << 20;
// Responses that are not SSE and at most this large are buffered whole (so that a failure
// mid-body can still become a clean 502); larger ones stream.
constexpr size_t kMaxBufferedBody = 16 << 20;

// What went wrong with the backend, for the client's error message. A read that fails after
// the backend was silent for (about) the idle timeout is the timeout.
std::string FailureText(bool headers_seen, httplib::Error error, Clock::duration silent,
                        std::chrono::seconds idle_timeout) {
  if (error == httplib::Error::Read && silent + std::chrono::seconds(1) >= idle_timeout) {
    return std::string(headers_seen ? "the backend's response stalled"
                                    : "the backend did not answer") +
           ": nothing for " + std::to_string(idle_timeout.count()) + " s (--upstream-idle-timeout)";
  }
  return headers_seen ? "the backend's response broke off: " + httplib::to_string(error)
                      : "could not reach the backend: " + httplib::to_string(error);
}

}  // namespace

struct UpstreamProxy::Exchange {
  std::mutex mu;
  std::condition_variable cv;
  // Guarded by mu:
  bool headers_ready = false;
  int status = 0;
  httplib::Headers headers;
  std::deque<std::string> chunks;
  size_t queued_bytes = 0;
  bool upstream_done = false;
  Status upstream_error;
  bool client_gone = false;
  bool may_retry = false;  // a refused connection is reported, not answered (see Forward)
  bool refused = false;
  // Set while the writer waits inside its content provider: the upstream thread then writes each
  // chunk to the client itself (no hand-off per chunk; a slow client slows the backend).
  httplib::DataSink* sink = nullptr;

  // Touched by one thread at a time (upstream thread while receiving, then the writer).
  Lease lease;
  ProxyRecord record;
  UsageScanner scanner{false};
  Clock::time_point start = Clock::now();
  Clock::time_point last_byte = start;  // Guarded by mu.
  RecordSink on_record;

  ~Exchange() {
    lease.Release();
    record.duration = Clock::now() - start;
    if (on_record) on_record(record);
  }
};

UpstreamProxy::UpstreamProxy(FailureDescriber describe_failure, RecordSink on_record,
                             std::chrono::seconds idle_timeout)
    : describe_failure_(std::move(describe_failure)),
      on_record_(std::move(on_record)),
      idle_timeout_(idle_timeout),
      clients_(idle_timeout),
      workers_(2, 100000) {}

UpstreamProxy::~UpstreamProxy() { workers_.shutdown(); }

void UpstreamProxy::RunUpstream(const std::shared_ptr<Exchange>& ex, ProxyRequest request) {
  ProxyUrl url = ParseProxyUrl(ex->lease.proxy_url());
  std::unique_ptr<httplib::Client> client = clients_.Take(url.origin);

  httplib::Request req = UpstreamRequest(url, request);
  req.response_handler = [ex](const httplib::Response& r) {
    std::lock_guard lock(ex->mu);
    ex->status = r.status;
    ex->headers = r.headers;
    ex->headers_ready = true;
    ex->scanner = UsageScanner(IsEventStream(r.get_header_value("Content-Type")));
    ex->record.time_to_first_byte = Clock::now() - ex->start;
    ex->last_byte = Clock::now();
    ex->cv.notify_all();
    return !ex->client_gone;
  };
  req.content_receiver = [ex](const char* data, size_t n, uint64_t, uint64_t) {
    std::unique_lock lock(ex->mu);
    ex->cv.wait(lock, [&] {
      return ex->client_gone || ex->sink != nullptr || ex->queued_bytes < kMaxQueuedBytes;
    });
    if (ex->client_gone) return false;
    ex->last_byte = Clock::now();
    ex->scanner.Feed(std::string_view(data, n));
    ex->record.bytes += n;
    if (ex->sink != nullptr) {
      if (ex->sink->write(data, n)) return true;
      ex->client_gone = true;
      ex->record.client_gone = true;
      ex->cv.notify_all();
      return false;
    }
    ex->chunks.emplace_back(data, n);
    ex->queued_bytes += n;
    ex->cv.notify_all();
    return true;
  };

  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  bool ok = client->send(req, res, error);

  // Give the connection back before the writer learns that the body is complete: the client's
  // next request would otherwise find the pool empty and open a new connection.
  if (ok) clients_.GiveBack(url.origin, std::move(client));
  std::unique_lock lock(ex->mu);
  ex->record.usage = ex->scanner.Finish();
  if (!ok && ex->may_retry && !ex->headers_ready && error == httplib::Error::Connection) {
    ex->refused = true;
    ex->on_record = nullptr;  // the retry is the request that counts
  } else if (!ok && !ex->client_gone) {
    std::string what =
        FailureText(ex->headers_ready, error, Clock::now() - ex->last_byte, idle_timeout_);
    lock.unlock();
    Status status = describe_failure_(ex->lease.model_id(), what);
    lock.lock();
    ex->upstream_error = status;
    ex->record.upstream_failed = true;
  }
  ex->upstream_done = true;
  ex->cv.notify_all();
}

bool UpstreamProxy::RunsInline(const ProxyRequest& request) {
  return request.method == "POST" && IsJsonRoute(request.target) && !AsksForStream(request.body);
}

UpstreamProxy::Delivery UpstreamProxy::Forward(Lease lease, ProxyRequest request,
                                               httplib::Response& res, bool may_retry) {
  if (RunsInline(request)) {
    return ForwardInline(std::move(lease), std::move(request), res, may_retry);
  }
  return ForwardThreaded(std::move(lease), std::move(request), res, may_retry);
}

UpstreamProxy::Delivery UpstreamProxy::ForwardInline(Lease lease, ProxyRequest request,
                                                     httplib::Response& res, bool may_retry) {
  const Clock::time_point start = Clock::now();
  ProxyRecord record;
  record.model_id = lease.model_id();
  ProxyUrl url = ParseProxyUrl(lease.proxy_url());
  std::unique_ptr<httplib::Client> client = clients_.Take(url.origin);
  httplib::Request req = UpstreamRequest(url, request);

  bool headers_seen = false;
  bool too_large = false;
  Clock::time_point last_byte = start;
  int status = 0;
  httplib::Headers headers;
  std::string body;
  UsageScanner scanner(false);
  req.response_handler = [&](const httplib::Response& r) {
    headers_seen = true;
    status = r.status;
    headers = r.headers;
    scanner = UsageScanner(IsEventStream(r.get_header_value("Content-Type")));
    record.time_to_first_byte = Clock::now() - start;
    last_byte = Clock::now();
    if (r.has_header("Content-Length") &&
        std::strtoull(r.get_header_value("Content-Length").c_str(), nullptr, 10) > kMaxInlineBody) {
      too_large = true;
      return false;
    }
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (body.size() + n > kMaxInlineBody) {
      too_large = true;
      return false;
    }
    body.append(data, n);
    last_byte = Clock::now();
    scanner.Feed(std::string_view(data, n));
    return true;
  };
  httplib::Response upstream;
  httplib::Error error = httplib::Error::Success;
  const bool ok = client->send(req, upstream, error);
  if (ok) clients_.GiveBack(url.origin, std::move(client));
  if (!ok && may_retry && !headers_seen && error == httplib::Error::Connection) {
    return Delivery::kRefused;  // `lease` goes out of scope: the request ends unanswered
  }
  record.bytes = body.size();
  record.usage = scanner.Finish();

  Status failure;
  if (too_large) {
    failure = Status::Error(
        ErrorCode::kBackendFailed,
        "model \"" + record.model_id + "\": the backend's answer is larger than " +
            std::to_string(kMaxInlineBody >> 20) +
            " MiB, more than swapd buffers for a request without \"stream\": true; ask for a "
            "stream");
  } else if (!ok) {
    failure = describe_failure_(
        record.model_id, FailureText(headers_seen, error, Clock::now() - last_byte, idle_timeout_));
  }
  lease.Release();

  if (failure.ok()) {
    res.status = status;
    ResponseHead head = CopyHeaders(headers, res);
    res.set_content(std::move(body), head.content_type);
  } else {
    record.upstream_failed = true;
    ResponseHead head;
    if (headers_seen && !too_large) head = CopyHeaders(headers, res);
    if (headers_seen && !too_large && head.sse) {
      // An SSE answer that broke off: what came, then the error event (as a stream ends).
      res.status = status;
      body += ErrorEvent(failure);
      res.set_content(std::move(body), head.content_type);
    } else {
      res.headers.clear();
      SetErrorResponse(res, failure);
    }
  }
  record.status = res.status;
  record.duration = Clock::now() - start;
  if (on_record_) on_record_(record);
  return Delivery::kDone;
}

UpstreamProxy::Delivery UpstreamProxy::ForwardThreaded(Lease lease, ProxyRequest request,
                                                       httplib::Response& res, bool may_retry) {
  auto ex = std::make_shared<Exchange>();
  ex->record.model_id = lease.model_id();
  ex->lease = std::move(lease);
  ex->on_record = on_record_;
  ex->may_retry = may_retry;
  workers_.enqueue(
      [this, ex, request = std::move(request)]() mutable { RunUpstream(ex, std::move(request)); });

  std::unique_lock lock(ex->mu);
  ex->cv.wait(lock, [&] { return ex->headers_ready || ex->upstream_done; });
  if (!ex->headers_ready) {
    if (ex->refused) {
      ex->lease.Release();  // the upstream thread is done with the exchange
      return Delivery::kRefused;
    }
    SetErrorResponse(res, ex->upstream_error.ok() ? Status::Error(ErrorCode::kBackendFailed,
                                                                  "the backend did not answer")
                                                  : ex->upstream_error);
    ex->record.status = res.status;
    return Delivery::kDone;
  }

  res.status = ex->status;
  ex->record.status = ex->status;
  const ResponseHead head = CopyHeaders(ex->headers, res);
  const std::string& content_type = head.content_type;
  const bool sse = head.sse;
  const bool stream = sse || !head.has_length || head.content_length > kMaxBufferedBody;
  ex->record.streamed = stream;

  if (!stream) {
    ex->cv.wait(lock, [&] { return ex->upstream_done; });
    if (!ex->upstream_error.ok()) {
      res.headers.clear();
      SetErrorResponse(res, ex->upstream_error);
      ex->record.status = res.status;
      return Delivery::kDone;
    }
    std::string body;
    body.reserve(ex->queued_bytes);
    for (auto& chunk : ex->chunks) body += chunk;
    ex->chunks.clear();
    ex->queued_bytes = 0;
    res.set_content(std::move(body), content_type);
    return Delivery::kDone;
  }

  res.set_header("X-Accel-Buffering", "no");
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      content_type,
      [ex, sse](size_t, httplib::DataSink& sink) {
        // Runs once: forwards what is queued, then lends `sink` to the upstream thread until
        // the body is complete. Chunks are written under mu, so their order is kept.
        std::unique_lock lock(ex->mu);
        auto client_left = [&] {
          ex->client_gone = true;
          ex->record.client_gone = true;
          ex->cv.notify_all();
          return false;
        };
        for (; !ex->chunks.empty(); ex->chunks.pop_front()) {
          if (!sink.write(ex->chunks.front().data(), ex->chunks.front().size())) {
            return client_left();
          }
        }
        ex->queued_bytes = 0;
        if (!ex->upstream_done && !ex->client_gone) {
          ex->sink = &sink;
          ex->cv.notify_all();
          ex->cv.wait(lock, [&] { return ex->upstream_done || ex->client_gone; });
          ex->sink = nullptr;
        }
        if (ex->client_gone) return false;
        if (!ex->upstream_error.ok() && sse) {
          std::string event = ErrorEvent(ex->upstream_error);
          sink.write(event.data(), event.size());
        }
        sink.done();
        return true;
      },
      [ex](bool) {
        std::lock_guard lock(ex->mu);
        if (!ex->upstream_done) {
          ex->client_gone = true;
          ex->record.client_gone = true;
        }
        ex->cv.notify_all();
      });
  return Delivery::kDone;
}

}  // namespace swapd
