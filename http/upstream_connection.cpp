#include "http/upstream_connection.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "http/request_context.h"

namespace swapd {
namespace {

using Kind = UpstreamFailure::Kind;

constexpr size_t kBufferSize = 16 * 1024;  // the read buffer, grown only for a large head
constexpr size_t kMinRead = 2048;          // below this much free space the buffer is compacted
constexpr size_t kMaxHead = 64 * 1024;     // a response head larger than this is refused
// How often a blocking read wakes up to see whether the client is still there.
constexpr std::chrono::seconds kClientCheck{1};

bool IsTls(const ProxyUrl& url) { return url.origin.rfind("https://", 0) == 0; }

void SetTimeout(int fd, int option, std::chrono::seconds timeout) {
  timeval tv{static_cast<time_t>(timeout.count()), 0};
  setsockopt(fd, SOL_SOCKET, option, &tv, sizeof tv);
}

// The client context for https backends: the system's CA store, peers verified.
SSL_CTX* TlsContext() {
  static SSL_CTX* const context = [] {
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == nullptr) return ctx;
    SSL_CTX_set_default_verify_paths(ctx);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    // A backend that closes without close_notify ends a body read until close, as with HTTP.
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    return ctx;
  }();
  return context;
}

std::string TlsErrorText() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "TLS handshake failed";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

bool IsLoopback(const sockaddr& address) {
  if (address.sa_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(address);
    return (ntohl(in.sin_addr.s_addr) >> 24) == 127;
  }
  if (address.sa_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
    return IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr) != 0;
  }
  return false;
}

// A blocking connect to one address, bounded by `timeout` (SO_SNDTIMEO bounds connect() too);
// returns the socket or -1 with errno set. Four system calls fewer than a non-blocking connect
// waited for with poll (poll, getsockopt, two fcntl), and backends that close a keep-alive
// connection after a few requests (cpp-httplib's default is 5) make connects frequent.
int ConnectOne(const addrinfo& ai, std::chrono::seconds timeout) {
  int fd = socket(ai.ai_family, ai.ai_socktype | SOCK_CLOEXEC, ai.ai_protocol);
  if (fd < 0) return -1;
  SetTimeout(fd, SO_SNDTIMEO, timeout);
  if (connect(fd, ai.ai_addr, ai.ai_addrlen) != 0) {
    int error = errno;
    if (error == EINTR) {  // the connect goes on: wait for its end
      pollfd p{fd, POLLOUT, 0};
      const int ready =
          poll(&p, 1, timeout.count() > 0 ? static_cast<int>(timeout.count() * 1000) : -1);
      socklen_t len = sizeof error;
      error = ready == 0 ? ETIMEDOUT : ready < 0 ? errno : 0;
      if (ready > 0) getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
    } else if (error == EINPROGRESS) {
      error = ETIMEDOUT;  // SO_SNDTIMEO expired
    }
    if (error != 0) {
      close(fd);
      errno = error;
      return -1;
    }
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

std::unique_ptr<UpstreamConnection> UpstreamConnection::Open(const ProxyUrl& url,
                                                             const Timeouts& timeouts,
                                                             UpstreamFailure& failure) {
  const bool tls = IsTls(url);
  const std::string port = std::to_string(url.port != 0 ? url.port : tls ? 443 : 80);
  const std::string& where = url.authority;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  if (int rc = getaddrinfo(url.host.c_str(), port.c_str(), &hints, &addresses); rc != 0) {
    failure.Fail(Kind::kConnect, "cannot resolve " + where + ": " + gai_strerror(rc));
    return nullptr;
  }
  int fd = -1;
  int error = 0;
  bool loopback = false;
  for (addrinfo* ai = addresses; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ConnectOne(*ai, timeouts.connect);
    loopback = IsLoopback(*ai->ai_addr);
    // A refusal wins: that address is up and nothing listens (e.g. "localhost" as ::1 without
    // IPv6, then 127.0.0.1 refused), which is what the caller acts on.
    if (fd < 0 && (error == 0 || errno == ECONNREFUSED)) error = errno;
  }
  freeaddrinfo(addresses);
  if (fd < 0) {
    failure.Fail(error == ECONNREFUSED ? Kind::kRefused : Kind::kConnect,
                 std::string(std::strerror(error)) + " (" + where + ")");
    return nullptr;
  }
  // On this machine a backend that dies closes or resets the connection at once, and one that
  // hangs has its probes answered by the kernel: keep-alive probes would learn nothing there (and
  // cost three system calls on each of the frequent new connections to a local backend).
  if (timeouts.keepalive.count() > 0 && !loopback) {
    const int one = 1;
    const int idle = static_cast<int>(timeouts.keepalive.count());
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof idle);
  }
  SSL* ssl = nullptr;
  if (tls) {
    SetTimeout(fd, SO_SNDTIMEO, timeouts.tls_handshake);
    SetTimeout(fd, SO_RCVTIMEO, timeouts.tls_handshake);
    SSL_CTX* ctx = TlsContext();
    ssl = ctx != nullptr ? SSL_new(ctx) : nullptr;
    in6_addr ip;
    const bool is_ip = inet_pton(AF_INET6, url.host.c_str(), &ip) == 1 ||
                       inet_pton(AF_INET, url.host.c_str(), &ip) == 1;
    bool ok = ssl != nullptr && SSL_set_fd(ssl, fd) == 1;
    // The certificate must name the host: an IP address in an IP entry, a name in a DNS entry
    // (and the name goes out as SNI).
    if (ok && is_ip) ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), url.host.c_str()) == 1;
    if (ok && !is_ip) {
      ok = SSL_set1_host(ssl, url.host.c_str()) == 1 &&
           SSL_set_tlsext_host_name(ssl, url.host.c_str()) == 1;
    }
    if (!ok || SSL_connect(ssl) != 1) {
      failure.Fail(Kind::kConnect, "TLS with " + where + ": " + TlsErrorText());
      if (ssl != nullptr) SSL_free(ssl);
      close(fd);
      return nullptr;
    }
  }
  SetTimeout(fd, SO_SNDTIMEO, timeouts.write);
  SetTimeout(fd, SO_RCVTIMEO, std::min(timeouts.HeadLimit(), kClientCheck));
  return std::unique_ptr<UpstreamConnection>(new UpstreamConnection(fd, ssl, timeouts));
}

UpstreamConnection::UpstreamConnection(int fd, SSL* ssl, const Timeouts& timeouts)
    : fd_(fd),
      ssl_(ssl),
      read_timeout_(timeouts.read),
      head_timeout_(timeouts.HeadLimit()),
      wait_limit_(timeouts.read) {}

UpstreamConnection::~UpstreamConnection() {
  if (ssl_ != nullptr) SSL_free(ssl_);  // no close_notify: the backend needs none
  close(fd_);
}

bool UpstreamConnection::RawWrite(std::string_view data, UpstreamFailure& failure) {
  while (!data.empty()) {
    long n = ssl_ != nullptr ? SSL_write(ssl_, data.data(), static_cast<int>(data.size()))
                             : send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (ssl_ == nullptr && n < 0 && errno == EINTR) continue;
    // A write that times out is an I/O failure: kTimeout is the backend's silence.
    const bool timed_out = errno == EAGAIN || errno == EWOULDBLOCK;
    return failure.Fail(
        Kind::kIo, timed_out ? "sending the request timed out"
                             : std::string("sending the request failed: ") + std::strerror(errno));
  }
  return true;
}

bool UpstreamConnection::Send(std::string_view head, std::string_view body,
                              UpstreamFailure& failure) {
  received_any_ = false;
  body_ = BodyDecoder();
  if (ssl_ != nullptr || body.empty()) {
    return RawWrite(head, failure) && RawWrite(body, failure);
  }
  // Plain TCP: head and body leave in one system call (and, when small, one packet).
  iovec parts[2] = {{const_cast<char*>(head.data()), head.size()},
                    {const_cast<char*>(body.data()), body.size()}};
  msghdr msg{};
  msg.msg_iov = parts;
  msg.msg_iovlen = 2;
  long n = sendmsg(fd_, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR) n = sendmsg(fd_, &msg, MSG_NOSIGNAL);
  if (n < 0) return RawWrite(head, failure);  // reports the error
  size_t sent = static_cast<size_t>(n);
  if (sent < head.size()) return RawWrite(head.substr(sent), failure) && RawWrite(body, failure);
  return RawWrite(body.substr(sent - head.size()), failure);
}

long UpstreamConnection::RawRead(char* data, size_t size, int flags) {
  if (ssl_ == nullptr) {
    long n = recv(fd_, data, size, flags);
    while (n < 0 && errno == EINTR) n = recv(fd_, data, size, flags);
    return n;
  }
  int n = SSL_read(ssl_, data, static_cast<int>(size));
  if (n > 0) return n;
  int error = SSL_get_error(ssl_, n);
  if (error == SSL_ERROR_ZERO_RETURN) return 0;
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) errno = EAGAIN;
  if (error == SSL_ERROR_SSL) errno = EPROTO;
  ERR_clear_error();
  return -1;
}

long UpstreamConnection::Fill(UpstreamFailure& failure, RequestContext& context,
                              bool* would_block) {
  if (begin_ == end_) begin_ = end_ = 0;
  if (capacity_ - end_ < kMinRead) {
    if (begin_ > 0) {  // move what is left to the front
      std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (capacity_ - end_ < kMinRead) {
      // Not zero-filled: only the pages a read writes become resident.
      size_t capacity = std::max(kBufferSize, capacity_ * 2);
      std::unique_ptr<char[]> bigger(new char[capacity]);
      if (end_ > 0) std::memcpy(bigger.get(), buffer_.get(), end_);
      buffer_ = std::move(bigger);
      capacity_ = capacity;
    }
  }
  if (would_block == nullptr) context.WillBlock();
  long n = RawRead(buffer_.get() + end_, capacity_ - end_, would_block ? MSG_DONTWAIT : 0);
  if (n < 0 && would_block == nullptr && (errno == EAGAIN || errno == EWOULDBLOCK)) {
    // The socket's timeout is kClientCheck: wait on, as long as the client does, up to the read
    // timeout.
    const auto deadline = std::chrono::steady_clock::now() + wait_limit_ - kClientCheck;
    for (;;) {
      if (context.ClientGone()) {
        failure.Fail(Kind::kClientGone, "the client went away");
        return -1;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        errno = EAGAIN;  // timed out, below
        break;
      }
      n = RawRead(buffer_.get() + end_, capacity_ - end_, 0);
      if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) break;
    }
  }
  if (n > 0) {
    end_ += static_cast<size_t>(n);
    received_any_ = true;
    return n;
  }
  if (n == 0) {
    eof_ = true;
    return 0;
  }
  const bool timed_out = errno == EAGAIN || errno == EWOULDBLOCK;
  if (timed_out && would_block) {
    *would_block = true;
    return kWouldBlock;
  }
  failure.Fail(timed_out ? Kind::kTimeout : Kind::kIo,
               timed_out ? "read timed out" : std::string("read failed: ") + std::strerror(errno));
  return -1;
}

bool UpstreamConnection::ReadHead(bool head_request, ResponseStart& start, UpstreamFailure& failure,
                                  RequestContext& context, bool* would_block) {
  wait_limit_ = head_timeout_;
  for (;;) {
    size_t head_end = FindHeadEnd(Buffered());
    if (head_end == std::string_view::npos) {
      if (end_ - begin_ > kMaxHead) {
        return failure.Fail(Kind::kMalformed, "the response head is larger than 64 KiB");
      }
      long n = Fill(failure, context, would_block);
      if (n < 0) return false;
      if (n == 0) {
        return failure.Fail(Kind::kClosed,
                            received_any_
                                ? "the connection closed in the middle of the response head"
                                : "the connection closed without an answer");
      }
      continue;
    }
    Result<ResponseStart> parsed = ParseResponseHead(Buffered().substr(0, head_end), head_request);
    begin_ += head_end;
    if (!parsed.ok()) return failure.Fail(Kind::kMalformed, parsed.status().message());
    if (parsed.value().status >= 100 && parsed.value().status < 200) {
      if (parsed.value().status == 101) {
        return failure.Fail(Kind::kMalformed, "the backend switched protocols (101)");
      }
      continue;  // 100 Continue, 103 Early Hints: the answer follows
    }
    start = std::move(parsed).value();
    keep_alive_ = start.keep_alive;
    body_ = BodyDecoder(start.framing, start.content_length);
    return true;
  }
}

bool UpstreamConnection::ReadBody(std::string_view& piece, bool& done, UpstreamFailure& failure,
                                  RequestContext& context, bool* would_block) {
  wait_limit_ = read_timeout_;
  for (;;) {
    if (begin_ < end_) {
      std::string_view in = Buffered();
      piece = body_.Next(in);
      begin_ = end_ - in.size();
      if (!piece.empty()) return true;
    }
    if (body_.failed()) return failure.Fail(Kind::kMalformed, body_.error());
    if (body_.done()) {
      done = true;
      piece = {};
      return true;
    }
    long n = Fill(failure, context, would_block);
    if (n < 0) return false;
    if (n == 0) {
      body_.EndOfInput();
      if (body_.failed()) {
        return failure.Fail(Kind::kClosed, "the connection closed before the answer was complete");
      }
    }
  }
}

bool UpstreamConnection::Reusable() const {
  return body_.done() && keep_alive_ && !eof_ && begin_ == end_;
}

bool UpstreamConnection::IdleAndOpen() const {
  if (ssl_ != nullptr && SSL_pending(ssl_) > 0) return false;
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  return poll(&p, 1, 0) == 0;
}

}  // namespace swapd
