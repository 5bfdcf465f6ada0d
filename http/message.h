// The messages of swapd's HTTP layer: header fields, a request as the server read it, and the
// response a handler fills in (whole, or streamed piece by piece). Plain values; used by one
// thread at a time.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace swapd {

class RequestContext;
struct ProxyUrl;

// Header fields in the order received or added. Names compare ignoring ASCII case.
class HttpHeaders {
 public:
  using Field = std::pair<std::string, std::string>;

  void Add(std::string name, std::string value) {
    fields_.emplace_back(std::move(name), std::move(value));
  }
  // Replaces every field named `name` with one.
  void Set(std::string_view name, std::string value);
  void Erase(std::string_view name);
  bool Has(std::string_view name) const { return Find(name) != nullptr; }
  // The first field's value; "" when there is none. Valid until the headers change.
  std::string_view Get(std::string_view name) const {
    const Field* f = Find(name);
    return f == nullptr ? std::string_view() : std::string_view(f->second);
  }
  void Reserve(size_t fields) { fields_.reserve(fields); }
  void Clear() { fields_.clear(); }
  bool empty() const { return fields_.empty(); }
  size_t size() const { return fields_.size(); }
  std::vector<Field>::const_iterator begin() const { return fields_.begin(); }
  std::vector<Field>::const_iterator end() const { return fields_.end(); }

 private:
  const Field* Find(std::string_view name) const;
  std::vector<Field> fields_;
};

// The head of a request to `url`: "METHOD <url's path prefix><target> HTTP/1.1", Host, the whole
// lines of `extra` (each ending in \r\n), the `headers` that `skip` does not name, and
// Content-Length when there is a body or the method takes one.
std::string FormatRequestHead(const ProxyUrl& url, std::string_view method, std::string_view target,
                              std::string_view extra, const HttpHeaders& headers,
                              bool (*skip)(std::string_view name), size_t body_size);

struct HttpRequest {
  std::string method;
  std::string target;                                       // as sent: path and query
  std::string path;                                         // the target's path, percent-decoded
  std::vector<std::pair<std::string, std::string>> params;  // the query's pairs, decoded
  int minor_version = 1;                                    // HTTP/1.x
  HttpHeaders headers;
  std::string body;
  std::string remote_addr;
  int remote_port = 0;

  std::string_view Header(std::string_view name) const { return headers.Get(name); }
  // The first query parameter named `name`, decoded.
  std::optional<std::string_view> Param(std::string_view name) const;
};

// Where a streamed body goes.
class BodyWriter {
 public:
  virtual ~BodyWriter() = default;
  // Sends one piece; false once the client is gone (the stream should end).
  virtual bool Write(std::string_view piece) = 0;
  // The body is complete.
  virtual void End() = 0;
};

// A body produced while it is sent: the server calls `next` until it has ended the body
// (BodyWriter::End) or returned false (the transfer breaks off). Each call writes what it has,
// waiting at most a short while, so that the server can look at the client and at its own stop.
struct BodyStream {
  std::function<bool(BodyWriter& out, RequestContext& context)> next;
  // Called once the response is done with (sent, failed, or never sent): `whole` when the body
  // went out complete.
  std::function<void(bool whole)> finished;
  bool whole = false;

  BodyStream() = default;
  BodyStream(const BodyStream&) = delete;
  BodyStream& operator=(const BodyStream&) = delete;
  ~BodyStream() {
    if (finished) finished(whole);
  }
};

struct HttpResponse {
  int status = 200;
  HttpHeaders headers;
  std::string body;                    // unless streamed
  std::unique_ptr<BodyStream> stream;  // a streamed body (chunked), or null
  // Released once the response is written (or its connection is dropped): work that should
  // follow the client's answer instead of delaying it runs then (a proxied exchange records
  // itself, its metrics, history row and capture, in its destructor).
  std::shared_ptr<const void> keep_until_written;

  void SetBody(std::string content, std::string_view content_type) {
    body = std::move(content);
    headers.Set("Content-Type", std::string(content_type));
  }
  // A streamed body of `content_type` ("" for none).
  void SetStream(std::string_view content_type,
                 std::function<bool(BodyWriter&, RequestContext&)> next,
                 std::function<void(bool whole)> finished = {});
  void SetRedirect(std::string location, int redirect_status) {
    status = redirect_status;
    headers.Set("Location", std::move(location));
  }
  bool streamed() const { return stream != nullptr; }
};

// Fills `res` with the answer to a request that the HTTP layer refuses (malformed, too large) or
// whose handler threw: the status and a message; the application chooses the body's shape.
using ErrorRenderer = std::function<void(HttpResponse& res, int status, std::string_view message)>;

// The default ErrorRenderer: the message as text/plain.
void RenderPlainError(HttpResponse& res, int status, std::string_view message);

}  // namespace swapd
