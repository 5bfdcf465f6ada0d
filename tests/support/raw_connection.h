// A raw TCP connection to a loopback port, for the bytes an HTTP client library will not send
// (pipelined, malformed, oversized or trickled requests) and for reading an answer exactly as it
// comes off the socket.
//
//   RawConnection c(port);
//   REQUIRE(c.Send(RawPost("/v1/completions", R"({"model":"m"})")));
//   CHECK(RawStatus(c.ReadUntil("\r\n\r\n")) == 200);
#pragma once

#include <chrono>
#include <string>

namespace swapd::testing {

class RawConnection {
 public:
  // `receive_buffer` > 0 sets SO_RCVBUF before connecting (a client that reads slowly).
  explicit RawConnection(int port, int receive_buffer = 0);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  // Sends all of `bytes`; false if the connection broke first.
  bool Send(const std::string& bytes);
  // Up to `max` bytes, waiting at most `timeout` for any; "" on timeout, EOF or error.
  std::string Read(size_t max, std::chrono::milliseconds timeout);
  // Reads until `until` appears (or EOF, or `timeout`); returns everything up to and including
  // it and keeps the rest for the next read. "" if it did not appear, so that a check on the
  // result fails then.
  std::string ReadUntil(const std::string& until,
                        std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Everything until the peer closes the connection (or `timeout`).
  std::string ReadToEnd(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // The peer closed the connection (seen by a read).
  bool eof() const { return eof_; }
  void Close();

 private:
  // Waits up to `timeout` for bytes and appends them to buffer_.
  void Fill(std::chrono::milliseconds timeout);

  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string buffer_;  // read, not yet returned
};

// The status code of a raw "HTTP/1.x NNN ..." answer, or -1.
int RawStatus(const std::string& head);

// A complete HTTP/1.1 POST request with a Content-Length.
std::string RawPost(const std::string& path, const std::string& body,
                    const std::string& content_type = "application/json");

}  // namespace swapd::testing
