#include "daemon/upstream_proxy.h"

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "daemon/http_error.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

// Bytes a response may queue between the backend and a slow client before the backend waits.
constexpr size_t kMaxQueuedBytes = 1 << 20;
// Responses that are not SSE and at most this large are buffered whole (so that a failure
// mid-body can still become a clean 502); larger ones stream.
constexpr size_t kMaxBufferedBody = 16 << 20;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Headers that belong to one connection (RFC 9110 7.6.1), lengths httplib recomputes, and the
// pseudo-headers cpp-httplib adds to server requests.
bool IsHopByHop(const std::string& name) {
  static const char* const kNames[] = {
      "connection",  "keep-alive",     "proxy-authenticate", "proxy-authorization",
      "te",          "trailer",        "transfer-encoding",  "upgrade",
      "host",        "content-length", "accept-encoding",    "remote_addr",
      "remote_port", "local_addr",     "local_port"};
  std::string lower = Lower(name);
  for (const char* n : kNames) {
    if (lower == n) return true;
  }
  return false;
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

  // Touched by one thread at a time (upstream thread while receiving, then the writer).
  Lease lease;
  ProxyRecord record;
  UsageScanner scanner{false};
  Clock::time_point start = Clock::now();
  RecordSink on_record;

  ~Exchange() {
    lease.Release();
    record.duration = Clock::now() - start;
    if (on_record) on_record(record);
  }
};

UpstreamProxy::UpstreamProxy(FailureDescriber describe_failure, RecordSink on_record)
    : describe_failure_(std::move(describe_failure)),
      on_record_(std::move(on_record)),
      workers_(2, 100000) {}

UpstreamProxy::~UpstreamProxy() { workers_.shutdown(); }

void UpstreamProxy::RunUpstream(const std::shared_ptr<Exchange>& ex, ProxyRequest request) {
  UpstreamUrl url = ParseUpstreamUrl(ex->lease.proxy_url());
  std::unique_ptr<httplib::Client> client = clients_.Take(url.origin);

  httplib::Request req;
  req.method = request.method;
  req.path = url.path_prefix + request.target;
  for (auto& [name, value] : request.headers) {
    if (!IsHopByHop(name)) req.headers.emplace(name, value);
  }
  req.body = std::move(request.body);
  req.response_handler = [ex](const httplib::Response& r) {
    std::lock_guard lock(ex->mu);
    ex->status = r.status;
    ex->headers = r.headers;
    ex->headers_ready = true;
    ex->scanner =
        UsageScanner(Lower(r.get_header_value("Content-Type")).rfind("text/event-stream", 0) == 0);
    ex->record.time_to_first_byte = Clock::now() - ex->start;
    ex->cv.notify_all();
    return !ex->client_gone;
  };
  req.content_receiver = [ex](const char* data, size_t n, uint64_t, uint64_t) {
    std::unique_lock lock(ex->mu);
    ex->cv.wait(lock, [&] { return ex->client_gone || ex->queued_bytes < kMaxQueuedBytes; });
    if (ex->client_gone) return false;
    ex->scanner.Feed(std::string_view(data, n));
    ex->record.bytes += n;
    ex->chunks.emplace_back(data, n);
    ex->queued_bytes += n;
    ex->cv.notify_all();
    return true;
  };

  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  bool ok = client->send(req, res, error);

  std::unique_lock lock(ex->mu);
  ex->record.usage = ex->scanner.Finish();
  bool reusable = ok && !ex->client_gone;
  if (!ok && !ex->client_gone) {
    std::string what = ex->headers_ready
                           ? "the backend's response broke off: " + httplib::to_string(error)
                           : "could not reach the backend: " + httplib::to_string(error);
    lock.unlock();
    Status status = describe_failure_(ex->lease.model_id(), what);
    lock.lock();
    ex->upstream_error = status;
    ex->record.upstream_failed = true;
  }
  ex->upstream_done = true;
  ex->cv.notify_all();
  lock.unlock();
  if (reusable) clients_.GiveBack(url.origin, std::move(client));
}

void UpstreamProxy::Forward(Lease lease, ProxyRequest request, httplib::Response& res) {
  auto ex = std::make_shared<Exchange>();
  ex->record.model_id = lease.model_id();
  ex->lease = std::move(lease);
  ex->on_record = on_record_;
  workers_.enqueue(
      [this, ex, request = std::move(request)]() mutable { RunUpstream(ex, std::move(request)); });

  std::unique_lock lock(ex->mu);
  ex->cv.wait(lock, [&] { return ex->headers_ready || ex->upstream_done; });
  if (!ex->headers_ready) {
    SetErrorResponse(res, ex->upstream_error.ok() ? Status::Error(ErrorCode::kBackendFailed,
                                                                  "the backend did not answer")
                                                  : ex->upstream_error);
    ex->record.status = res.status;
    return;
  }

  res.status = ex->status;
  ex->record.status = ex->status;
  std::string content_type = "application/octet-stream";
  size_t content_length = 0;
  bool has_length = false;
  for (const auto& [name, value] : ex->headers) {
    std::string lower = Lower(name);
    if (lower == "content-type") {
      content_type = value;
      continue;
    }
    if (lower == "content-length") {
      has_length = true;
      content_length = std::strtoull(value.c_str(), nullptr, 10);
      continue;
    }
    if (!IsHopByHop(name)) res.headers.emplace(name, value);
  }
  const bool sse = Lower(content_type).rfind("text/event-stream", 0) == 0;
  const bool stream = sse || !has_length || content_length > kMaxBufferedBody;
  ex->record.streamed = stream;

  if (!stream) {
    ex->cv.wait(lock, [&] { return ex->upstream_done; });
    if (!ex->upstream_error.ok()) {
      res.headers.clear();
      SetErrorResponse(res, ex->upstream_error);
      ex->record.status = res.status;
      return;
    }
    std::string body;
    body.reserve(ex->queued_bytes);
    for (auto& chunk : ex->chunks) body += chunk;
    ex->chunks.clear();
    ex->queued_bytes = 0;
    res.set_content(std::move(body), content_type);
    return;
  }

  res.set_header("X-Accel-Buffering", "no");
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      content_type,
      [ex, sse](size_t, httplib::DataSink& sink) {
        std::deque<std::string> batch;
        {
          std::unique_lock lock(ex->mu);
          ex->cv.wait(lock, [&] { return !ex->chunks.empty() || ex->upstream_done; });
          batch.swap(ex->chunks);
          ex->queued_bytes = 0;
          ex->cv.notify_all();
        }
        for (const auto& chunk : batch) {
          if (!sink.write(chunk.data(), chunk.size())) {
            std::lock_guard lock(ex->mu);
            ex->client_gone = true;
            ex->record.client_gone = true;
            ex->cv.notify_all();
            return false;
          }
        }
        if (!batch.empty()) return true;
        // Nothing left and the backend is done.
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
}

}  // namespace swapd
