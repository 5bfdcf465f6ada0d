// A TCP socket listening on a given loopback port, as another program holding a backend's port
// would: for the tests of ${PORT} moving off a taken port. Closed when destroyed.
// Tests only; not synchronized.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace swapd::testing {

class PortHolder {
 public:
  explicit PortHolder(int port) : port_(port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd_, 4) != 0) {
      Close();
    }
  }
  ~PortHolder() { Close(); }
  PortHolder(const PortHolder&) = delete;
  PortHolder& operator=(const PortHolder&) = delete;

  bool listening() const { return fd_ >= 0; }
  int port() const { return port_; }

 private:
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int port_;
  int fd_ = -1;
};

// Writes a /bin/sh script to `path` that stands for a backend whose port was taken the first
// time: without `marker` it creates it, says "bind: Address already in use" and exits 1; with it
// it execs the fake backend on port $1 as model $2. `runs` gets a line per run.
inline void WriteBindFailsOnceScript(const std::string& path, const std::string& marker,
                                     const std::string& runs, const std::string& fake_backend) {
  std::ofstream(path) << "#!/bin/sh\n"
                      << "echo run >> '" << runs << "'\n"
                      << "if [ ! -e '" << marker << "' ]; then\n"
                      << "  touch '" << marker << "'\n"
                      << "  echo \"listen tcp 127.0.0.1:$1: bind: Address already in use\" >&2\n"
                      << "  exit 1\n"
                      << "fi\n"
                      << "exec '" << fake_backend << "' --port \"$1\" --model \"$2\"\n";
}

}  // namespace swapd::testing
