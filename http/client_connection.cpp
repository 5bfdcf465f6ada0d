#include "http/client_connection.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <utility>

#include "http/http1_syntax.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kReadSize = 16u << 10;
// After refusing a request, what the client still sends is read and dropped for this long (at
// most this much), so that it sees the answer instead of a reset connection.
constexpr auto kLingerTime = std::chrono::seconds(30);
constexpr uint64_t kLingerBytes = 1ull << 30;

bool BodyForbidden(int status) { return status < 200 || status == 204 || status == 304; }

iovec Iov(std::string_view s) { return {const_cast<char*>(s.data()), s.size()}; }

// The head of the response being written on this thread: its capacity stays for the next one
// (a head is built and sent before the thread writes anything else).
thread_local std::string response_head;

}  // namespace

const char* ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 101:
      return "Switching Protocols";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 206:
      return "Partial Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 303:
      return "See Other";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 308:
      return "Permanent Redirect";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "";
  }
}

ClientConnection::ClientConnection(int fd, std::string remote_addr, int remote_port,
                                   ConnectionLimits limits)
    : fd_(fd), remote_addr_(std::move(remote_addr)), remote_port_(remote_port), limits_(limits) {}

ClientConnection::~ClientConnection() { ::close(fd_); }

ClientConnection::Progress ClientConnection::Fill() {
  // Read on the stack and appended: growing in_ first would zero 16 KiB per read.
  char buffer[kReadSize];
  ssize_t n;
  do {
    n = ::recv(fd_, buffer, sizeof(buffer), 0);
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    in_.append(buffer, static_cast<size_t>(n));
    return Progress::kRequest;
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Progress::kWaiting;
  return Progress::kClosed;
}

ClientConnection::Progress ClientConnection::ReadRequest(HttpRequest& req) {
  if (refused_) return Drain();
  for (;;) {
    if (state_ == State::kHead) {
      const size_t end = FindHeadEnd(in_);
      if (end == std::string::npos ? in_.size() > limits_.max_head_bytes
                                   : end > limits_.max_head_bytes) {
        return Refuse(431, "the request line and headers are longer than " +
                               std::to_string(limits_.max_head_bytes) + " bytes");
      }
      if (end == std::string::npos) {
        if (Progress p = Fill(); p != Progress::kRequest) return p;
        continue;
      }
      RequestError error;
      if (!ParseRequestHead(std::string_view(in_).substr(0, end), limits_.max_header_fields, head_,
                            error)) {
        return Refuse(error.status, error.message);
      }
      in_.erase(0, end);
      if (head_.framing == BodyFraming::kLength && head_.content_length > limits_.max_body_bytes) {
        return Refuse(413, "the request body is larger than swapd accepts (" +
                               std::to_string(limits_.max_body_bytes) + " bytes)");
      }
      body_.clear();
      if (head_.framing == BodyFraming::kLength) body_.reserve(head_.content_length);
      body_decoder_ = BodyDecoder(head_.framing, head_.content_length);
      state_ = State::kBody;
      if (head_.expect_continue && !body_decoder_.done() && in_.empty()) {
        iovec iov = Iov("HTTP/1.1 100 Continue\r\n\r\n");
        if (!SendAll(&iov, 1)) return Progress::kClosed;
      }
    }
    std::string_view input(in_);
    for (std::string_view piece = body_decoder_.Next(input); !piece.empty();
         piece = body_decoder_.Next(input)) {
      body_.append(piece);
    }
    in_.erase(0, in_.size() - input.size());
    if (body_.size() > limits_.max_body_bytes) {
      return Refuse(413, "the request body is larger than swapd accepts (" +
                             std::to_string(limits_.max_body_bytes) + " bytes)");
    }
    if (body_decoder_.failed()) return Refuse(400, "malformed chunked request body");
    if (!body_decoder_.done()) {
      if (Progress p = Fill(); p != Progress::kRequest) return p;
      continue;
    }
    state_ = State::kHead;
    keep_alive_ = head_.keep_alive;
    head_request_ = head_.method == "HEAD";
    minor_version_ = head_.minor_version;
    req = HttpRequest();
    req.method = std::move(head_.method);
    req.target = std::move(head_.target);
    req.path = std::move(head_.path);
    req.params = ParseQuery(head_.query);
    req.minor_version = minor_version_;
    req.headers = std::move(head_.headers);
    req.body = std::move(body_);
    req.remote_addr = remote_addr_;
    req.remote_port = remote_port_;
    return Progress::kRequest;
  }
}

ClientConnection::Progress ClientConnection::Refuse(int status, const std::string& message) {
  HttpResponse res;
  limits_.render_error(res, status, message);
  keep_alive_ = false;
  head_request_ = false;
  minor_version_ = 1;
  std::atomic<bool> no_stop{false};
  NoRequestContext no_context;
  WriteResponse(res, no_stop, no_context);  // with "Connection: close", as keep_alive_ is false
  if (ClientGone()) return Progress::kClosed;
  ::shutdown(fd_, SHUT_WR);
  refused_ = true;
  drain_deadline_ = Clock::now() + kLingerTime;
  in_ = std::string();  // what was read of the request is not needed while draining
  body_ = std::string();
  return Drain();
}

ClientConnection::Progress ClientConnection::Drain() {
  char sink[16384];
  while (drained_ < kLingerBytes) {
    ssize_t n = ::recv(fd_, sink, sizeof(sink), 0);
    if (n > 0) {
      drained_ += static_cast<uint64_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return Progress::kWaiting;
    } else {
      break;  // the client's end, or an error
    }
  }
  return Progress::kClosed;
}

bool ClientConnection::SendAll(iovec* iov, int count, const std::atomic<bool>* stopping) {
  // A stopping server looks up this often from a client that takes nothing.
  constexpr std::chrono::milliseconds kStopCheck(200);
  const auto deadline = Clock::now() + limits_.write_timeout;
  while (count > 0) {
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(count);
    ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0 || (stopping != nullptr && *stopping)) return false;
      if (stopping != nullptr) left = std::min(left, kStopCheck);
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) return false;
      continue;
    }
    size_t sent = static_cast<size_t>(n);
    for (; count > 0 && sent >= iov->iov_len; ++iov, --count) sent -= iov->iov_len;
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + sent;
      iov->iov_len -= sent;
    }
  }
  return true;
}

bool ClientConnection::ClientGone() const {
  pollfd p{fd_, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

bool ClientConnection::WriteResponse(HttpResponse& res, const std::atomic<bool>& stopping,
                                     RequestContext& context) {
  const bool streamed = res.streamed();
  const bool no_body = BodyForbidden(res.status);
  // HTTP/1.0 has no chunked coding: a streamed body ends when the connection closes.
  const bool chunked = streamed && minor_version_ == 1;
  bool keep_alive = keep_alive_ && !(streamed && !chunked) && !stopping;

  std::string& head = response_head;
  head.assign("HTTP/1.1 ");
  AppendDecimal(head, static_cast<uint64_t>(res.status));
  head += ' ';
  head += ReasonPhrase(res.status);
  head += "\r\n";
  for (const auto& [name, value] : res.headers) {
    if (EqualsIgnoreCase(name, "Content-Length") || EqualsIgnoreCase(name, "Transfer-Encoding") ||
        EqualsIgnoreCase(name, "Connection") || EqualsIgnoreCase(name, "Keep-Alive")) {
      continue;
    }
    head += name;
    head += ": ";
    head += value;
    head += "\r\n";
  }
  if (!no_body) {
    if (chunked) {
      head += "Transfer-Encoding: chunked\r\n";
    } else if (head_request_ && res.headers.Has("Content-Length")) {
      // A HEAD answer passed on from a backend: the length of the body GET would have.
      head += "Content-Length: ";
      head += res.headers.Get("Content-Length");
      head += "\r\n";
    } else if (!streamed) {
      head += "Content-Length: ";
      AppendDecimal(head, res.body.size());
      head += "\r\n";
    }
  }
  if (!keep_alive) {
    head += "Connection: close\r\n";
  } else if (minor_version_ == 0) {
    head += "Connection: keep-alive\r\n";
  }
  head += "\r\n";

  if (!streamed || no_body || head_request_) {
    iovec iov[2] = {Iov(head), Iov(no_body || head_request_ ? std::string_view() : res.body)};
    if (!SendAll(iov, 2)) return false;
    if (res.stream) res.stream->whole = true;
    return keep_alive;
  }
  iovec iov = Iov(head);
  if (!SendAll(&iov, 1)) return false;
  return WriteStreamed(res, chunked, stopping, context) && keep_alive;
}

namespace {

// A streamed body's BodyWriter: each piece as a chunk (or as it is, for HTTP/1.0).
class ChunkWriter final : public BodyWriter {
 public:
  using Send = std::function<bool(iovec*, int)>;
  ChunkWriter(bool chunked, Send send) : chunked_(chunked), send_(std::move(send)) {}

  bool Write(std::string_view piece) override {
    if (!ok_) return false;
    if (piece.empty()) return true;
    wrote_ = true;
    if (!chunked_) {
      iovec iov = Iov(piece);
      return ok_ = send_(&iov, 1);
    }
    char size_line[24];
    int n = snprintf(size_line, sizeof(size_line), "%zx\r\n", piece.size());
    iovec iov[3] = {Iov(std::string_view(size_line, static_cast<size_t>(n))), Iov(piece),
                    Iov("\r\n")};
    return ok_ = send_(iov, 3);
  }
  void End() override {
    if (done_ || !ok_) return;
    done_ = true;
    if (chunked_) {
      iovec iov = Iov("0\r\n\r\n");
      ok_ = send_(&iov, 1);
    }
  }

  bool ok() const { return ok_; }
  bool done() const { return done_; }
  // Whether anything was written since the last call.
  bool TakeWrote() { return std::exchange(wrote_, false); }

 private:
  const bool chunked_;
  const Send send_;
  bool ok_ = true;
  bool done_ = false;
  bool wrote_ = false;
};

}  // namespace

bool ClientConnection::WriteStreamed(HttpResponse& res, bool chunked,
                                     const std::atomic<bool>& stopping, RequestContext& context) {
  ChunkWriter out(
      chunked, [this, &stopping](iovec* iov, int count) { return SendAll(iov, count, &stopping); });
  while (!out.done()) {
    out.TakeWrote();
    if (!res.stream->next(out, context) || !out.ok()) return false;
    // A producer that had nothing to send (a quiet log stream) checks on the client meanwhile.
    if (!out.done() && (stopping || (!out.TakeWrote() && ClientGone()))) return false;
  }
  res.stream->whole = out.ok();
  return out.ok();
}

}  // namespace swapd
