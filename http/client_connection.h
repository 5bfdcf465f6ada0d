// ClientConnection: one client's keep-alive connection to the front door (HTTP/1.1 and 1.0).
// Requests are read without blocking: one that arrives in pieces is resumed where it stopped, so
// that a slow client holds no thread between the pieces. Responses are written blocking (up to a
// timeout per write), a streamed one piece by piece from its content provider as chunked
// transfer coding. A request that cannot be served (malformed, too large) is answered here with
// the ErrorRenderer's error, and the connection then closes once the client has stopped sending
// (what it still sends is read and dropped, without blocking, for a while: closing with unread
// bytes would reset the connection and could lose the answer). Used by one thread at a time.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <string>

#include "http/http1_request.h"
#include "http/message.h"
#include "http/request_context.h"

namespace swapd {

struct ConnectionLimits {
  size_t max_body_bytes = 256u << 20;              // larger request bodies get 413
  size_t max_header_fields = 256;                  // more get 431
  size_t max_head_bytes = 64u << 10;               // a longer request line and fields get 431
  std::chrono::milliseconds write_timeout{60000};  // a client that takes nothing for this long
  ErrorRenderer render_error = RenderPlainError;   // the answer to a refused request
};

class ClientConnection {
 public:
  // Takes ownership of the connected, non-blocking socket `fd`.
  ClientConnection(int fd, std::string remote_addr, int remote_port, ConnectionLimits limits);
  ~ClientConnection();  // closes the socket
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;

  int fd() const { return fd_; }

  enum class Progress {
    kRequest,  // `req` holds a whole request
    kWaiting,  // the socket has nothing more for now: wait until it is readable, then call again
    kClosed,   // the client closed, failed, or sent a request that was refused: close
  };
  Progress ReadRequest(HttpRequest& req);

  // Part of a request has been read (the read timeout applies rather than the idle timeout).
  bool in_request() const { return state_ != State::kHead || !in_.empty(); }
  // A request was refused; ReadRequest now drops what the client still sends, until this time.
  bool refused() const { return refused_; }
  std::chrono::steady_clock::time_point drain_deadline() const { return drain_deadline_; }

  // Writes the response to the request ReadRequest returned last. `stopping` ends a streamed
  // body between two pieces; `context` is handed to a streamed body's producer. True when the
  // connection may carry another request.
  bool WriteResponse(HttpResponse& res, const std::atomic<bool>& stopping, RequestContext& context);

  // The client closed its side or the connection broke (a poll that does not wait). Safe while
  // another thread reads or writes the connection.
  bool ClientGone() const;

 private:
  enum class State { kHead, kBody };
  // Reads more of the request from the socket into in_. kRequest means "got bytes".
  Progress Fill();
  // Answers the request with an error and starts draining (kWaiting) unless the client is gone.
  Progress Refuse(int status, const std::string& message);
  // Reads and drops what is readable now: kClosed at the client's end (or after too much).
  Progress Drain();
  // Sends everything, waiting for the client up to write_timeout without progress; false when it
  // broke, timed out, or (`stopping` given) the server stopped meanwhile.
  bool SendAll(iovec* iov, int count, const std::atomic<bool>* stopping = nullptr);
  bool WriteStreamed(HttpResponse& res, bool chunked, const std::atomic<bool>& stopping,
                     RequestContext& context);

  const int fd_;
  const std::string remote_addr_;
  const int remote_port_;
  const ConnectionLimits limits_;
  State state_ = State::kHead;
  std::string in_;  // read, not yet consumed
  RequestHead head_;
  BodyDecoder body_decoder_;
  std::string body_;
  bool refused_ = false;
  std::chrono::steady_clock::time_point drain_deadline_;
  uint64_t drained_ = 0;
  bool keep_alive_ = true;
  bool head_request_ = false;
  int minor_version_ = 1;
};

// "OK", "Not Found", ...: the reason phrase of an HTTP status code ("" for an unknown one).
const char* ReasonPhrase(int status);

}  // namespace swapd
