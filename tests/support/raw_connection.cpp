#include "tests/support/raw_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace swapd::testing {

using Clock = std::chrono::steady_clock;

RawConnection::RawConnection(int port, int receive_buffer) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (receive_buffer > 0) {
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
}

RawConnection::~RawConnection() { Close(); }

void RawConnection::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool RawConnection::Send(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

void RawConnection::Fill(std::chrono::milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return;
  char buf[16384];
  ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
  if (n <= 0) {
    eof_ = true;
    return;
  }
  buffer_.append(buf, static_cast<size_t>(n));
}

std::string RawConnection::Read(size_t max, std::chrono::milliseconds timeout) {
  if (buffer_.empty() && !eof_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return "";
    std::string bytes(max, '\0');
    ssize_t n = ::recv(fd_, bytes.data(), max, 0);
    if (n <= 0) eof_ = true;
    bytes.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return bytes;
  }
  std::string bytes = buffer_.substr(0, max);
  buffer_.erase(0, bytes.size());
  return bytes;
}

std::string RawConnection::ReadUntil(const std::string& until, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (buffer_.find(until) == std::string::npos && !eof_ && Clock::now() < deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    Fill(std::clamp(left, std::chrono::milliseconds(0), std::chrono::milliseconds(200)));
  }
  const size_t at = buffer_.find(until);
  if (at == std::string::npos) return "";
  const size_t n = at + until.size();
  std::string out = buffer_.substr(0, n);
  buffer_.erase(0, n);
  return out;
}

std::string RawConnection::ReadToEnd(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!eof_ && Clock::now() < deadline) Fill(std::chrono::milliseconds(200));
  std::string out;
  out.swap(buffer_);
  return out;
}

int RawStatus(const std::string& head) {
  if (head.rfind("HTTP/1.", 0) != 0 || head.size() < 12) return -1;
  return std::atoi(head.c_str() + 9);
}

std::string RawPost(const std::string& path, const std::string& body,
                    const std::string& content_type) {
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace swapd::testing
