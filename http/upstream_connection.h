// UpstreamConnection: one HTTP/1.1 connection from the proxy to a backend, over TCP or TLS
// (an https:// proxy URL; the system's CA store, the host name verified). It carries one request
// at a time and hands the response back piece by piece as it arrives, on the caller's thread, so
// that the thread serving a client can also read its backend: one thread per request, and no
// copy of the body beyond the socket read. Blocking I/O with timeouts (connect, read: the
// backend's silence, write). A blocking read looks every second whether the client is still
// there (RequestContext::ClientGone) and gives up when it is not. Used by one thread at a time;
// idle connections wait in UpstreamClientPool.
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "base/proxy_url.h"
#include "http/http1_response.h"
#include "http/request_context.h"

typedef struct ssl_st SSL;

namespace swapd {

// Why an exchange with the backend failed.
struct UpstreamFailure {
  enum class Kind {
    kNone,
    kRefused,     // nothing listens on the port (connect: ECONNREFUSED)
    kConnect,     // the name did not resolve, the connect timed out, the TLS handshake failed
    kTimeout,     // the backend sent nothing for the read timeout
    kClosed,      // the backend closed the connection before its answer was complete
    kIo,          // a socket error (reset, ...)
    kMalformed,   // the answer is not HTTP/1.x
    kClientGone,  // not the backend's doing: the client went away while its answer was awaited
  };
  Kind kind = Kind::kNone;
  std::string text;  // e.g. "connection refused (127.0.0.1:5800)"

  bool ok() const { return kind == Kind::kNone; }
  // Records why an exchange failed; false, for `return failure.Fail(...)`.
  bool Fail(Kind why, std::string what) {
    kind = why;
    text = std::move(what);
    return false;
  }
};

// How long a backend may send nothing, before its first byte or between two, unless the daemon
// is told otherwise (--upstream-idle-timeout). Long: a CPU model may process a long prompt for many
// minutes before its first byte.
inline constexpr std::chrono::seconds kDefaultUpstreamIdleTimeout{7200};

class UpstreamConnection {
 public:
  // 0 disables a limit (connect then waits as long as the kernel does).
  struct Timeouts {
    std::chrono::seconds connect{10};
    std::chrono::seconds read = kDefaultUpstreamIdleTimeout;  // the longest silence of the backend
    std::chrono::seconds write{300};
    // The longest wait for the answer's head, when shorter than `read` (0: `read`).
    std::chrono::seconds response_header{0};
    std::chrono::seconds tls_handshake{10};
    // TCP keep-alive probes after this much idleness, and then at this interval (0: none).
    std::chrono::seconds keepalive{0};

    // How long ReadHead waits for the head.
    std::chrono::seconds HeadLimit() const {
      return response_header.count() > 0 ? std::min(read, response_header) : read;
    }
  };

  // Connects to `url`'s host and port (80 or 443 when it names none); https:// URLs use TLS.
  // Returns nullptr and sets `failure` when it cannot.
  static std::unique_ptr<UpstreamConnection> Open(const ProxyUrl& url, const Timeouts& timeouts,
                                                  UpstreamFailure& failure);
  ~UpstreamConnection();
  UpstreamConnection(const UpstreamConnection&) = delete;
  UpstreamConnection& operator=(const UpstreamConnection&) = delete;

  // Sends a request: `head` (request line and fields, up to the empty line) and `body`.
  bool Send(std::string_view head, std::string_view body, UpstreamFailure& failure);
  // Reads the response head (interim 1xx answers are skipped). `head_request`: the request was
  // HEAD, so the answer has no body. With `would_block` (plain TCP only, see can_defer()), it
  // does not wait: when the socket has nothing more yet it returns false with *would_block set,
  // and a later call goes on where this one stopped.
  bool ReadHead(bool head_request, ResponseStart& start, UpstreamFailure& failure,
                RequestContext& context, bool* would_block = nullptr);
  // The next piece of the body, valid until the next call; `done` once the body is complete
  // (then `piece` is empty). `would_block` as for ReadHead.
  bool ReadBody(std::string_view& piece, bool& done, UpstreamFailure& failure,
                RequestContext& context, bool* would_block = nullptr);

  // Whether reads may be done without waiting, for a wait in an epoll set (not over TLS, whose
  // records may be read only in part).
  bool can_defer() const { return ssl_ == nullptr; }
  int fd() const { return fd_; }
  // Whether a server's epoll set holds the socket (see DeferredStep::in_set).
  bool* in_epoll_set() { return &in_epoll_set_; }

  // The answer was read whole and the connection may carry another request.
  bool Reusable() const;
  // An idle connection that has nothing to read (no EOF, no reset, no stray bytes) is still good.
  bool IdleAndOpen() const;
  // Whether any byte of the current answer has arrived (a reused connection that fails before
  // that was most likely closed by the backend while idle: the request can be sent again).
  bool received_any() const { return received_any_; }

 private:
  UpstreamConnection(int fd, SSL* ssl, const Timeouts& timeouts);
  // Reads more bytes into the buffer; 0 on EOF; with `would_block`, kWouldBlock rather than
  // waiting.
  static constexpr long kWouldBlock = -2;
  long Fill(UpstreamFailure& failure, RequestContext& context, bool* would_block);
  long RawRead(char* data, size_t size, int flags);
  bool RawWrite(std::string_view data, UpstreamFailure& failure);

  int fd_;
  SSL* ssl_;  // null for plain TCP
  const std::chrono::seconds read_timeout_;
  const std::chrono::seconds head_timeout_;
  std::chrono::seconds wait_limit_;  // of the read under way: head_timeout_ or read_timeout_
  std::string_view Buffered() const { return {buffer_.get() + begin_, end_ - begin_}; }

  std::unique_ptr<char[]> buffer_;  // bytes read: [begin_, end_) not yet consumed
  size_t capacity_ = 0;
  size_t begin_ = 0;
  size_t end_ = 0;
  BodyDecoder body_;
  bool keep_alive_ = false;
  bool eof_ = false;
  bool received_any_ = false;
  bool in_epoll_set_ = false;
};

}  // namespace swapd
