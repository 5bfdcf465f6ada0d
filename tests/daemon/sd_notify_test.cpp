// The sd_notify protocol without libsystemd (daemon/sd_notify.h): datagrams reach a path socket
// and an abstract '@' socket with this process's credentials, as systemd receives them; bad
// NOTIFY_SOCKET values are errors, not crashes; WATCHDOG_USEC/WATCHDOG_PID follow
// sd_watchdog_enabled()'s rule.
#include "daemon/sd_notify.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "tests/support/scoped_env.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;

// One datagram and the sender's pid, which the kernel attaches because the socket asks for
// credentials (SO_PASSCRED), as systemd's notify socket does.
struct Received {
  std::string text;
  pid_t pid = 0;
};

// A bound unix datagram socket standing in for systemd's: a path socket in a fresh temporary
// directory, or an abstract one with a name unique to this process.
class Receiver {
 public:
  explicit Receiver(bool abstract) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    int on = 1;
    REQUIRE(setsockopt(fd_, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) == 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    socklen_t length;
    if (abstract) {
      static int counter = 0;
      std::string name =
          "swapd-sd-notify-test-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
      notify_socket_ = "@" + name;
      name.copy(addr.sun_path + 1, name.size());  // sun_path[0] stays NUL: abstract
      length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    } else {
      char tmpl[] = "/tmp/swapd-sd-notify-XXXXXX";
      REQUIRE(mkdtemp(tmpl) != nullptr);
      dir_ = tmpl;
      notify_socket_ = dir_ + "/notify.sock";
      notify_socket_.copy(addr.sun_path, notify_socket_.size());
      length = sizeof(addr);
    }
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&addr), length) == 0);
  }
  ~Receiver() {
    close(fd_);
    if (!dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }
  Receiver(const Receiver&) = delete;
  Receiver& operator=(const Receiver&) = delete;

  // What NOTIFY_SOCKET must say to reach this socket.
  const std::string& notify_socket() const { return notify_socket_; }

  // The next datagram, or nullopt when none comes within `timeout`.
  std::optional<Received> Next(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return std::nullopt;
    char buffer[4096];
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
    iovec iov{buffer, sizeof(buffer)};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t n = recvmsg(fd_, &msg, MSG_DONTWAIT);
    if (n < 0) return std::nullopt;
    Received received;
    received.text.assign(buffer, static_cast<size_t>(n));
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
        ucred credentials{};
        std::memcpy(&credentials, CMSG_DATA(c), sizeof(credentials));
        received.pid = credentials.pid;
      }
    }
    return received;
  }

 private:
  int fd_ = -1;
  std::string dir_;
  std::string notify_socket_;
};

TEST_CASE("SdNotify sends one datagram to a path or an abstract '@' socket", "[unit][notify]") {
  bool abstract = GENERATE(false, true);
  INFO((abstract ? "abstract" : "path") << " socket");
  Receiver receiver(abstract);
  ScopedEnv notify("NOTIFY_SOCKET", receiver.notify_socket());

  Result<bool> sent = SdNotify("READY=1\nSTATUS=serving; no model running");
  INFO(sent.status().ToString());
  REQUIRE(sent.ok());
  CHECK(sent.value());
  auto first = receiver.Next(10s);
  REQUIRE(first);
  CHECK(first->text == "READY=1\nSTATUS=serving; no model running");
  CHECK(first->pid == getpid());  // systemd attributes the message to swapd by this

  REQUIRE(SdNotify("WATCHDOG=1").ok());
  auto second = receiver.Next(10s);
  REQUIRE(second);
  CHECK(second->text == "WATCHDOG=1");
}

TEST_CASE("SdNotify without a usable NOTIFY_SOCKET", "[unit][notify]") {
  SECTION("unset or empty: nothing to do, not an error") {
    {
      ScopedEnv unset("NOTIFY_SOCKET", std::nullopt);
      Result<bool> sent = SdNotify("READY=1");
      REQUIRE(sent.ok());
      CHECK_FALSE(sent.value());
    }
    ScopedEnv empty("NOTIFY_SOCKET", "");
    Result<bool> sent = SdNotify("READY=1");
    REQUIRE(sent.ok());
    CHECK_FALSE(sent.value());
  }
  SECTION("an address that is neither a path nor an '@' name") {
    std::string value = GENERATE(std::string("relative/notify.sock"), std::string("vsock:2:1234"));
    ScopedEnv notify("NOTIFY_SOCKET", value);
    Result<bool> sent = SdNotify("READY=1");
    REQUIRE_FALSE(sent.ok());
    CHECK(sent.status().message().find(value) != std::string::npos);
  }
  SECTION("a name too long for a unix socket address") {
    ScopedEnv notify("NOTIFY_SOCKET", "/" + std::string(sizeof(sockaddr_un::sun_path), 'x'));
    CHECK_FALSE(SdNotify("READY=1").ok());
  }
  SECTION("nobody listening") {
    ScopedEnv notify("NOTIFY_SOCKET", "/nonexistent-swapd-dir/notify.sock");
    Result<bool> sent = SdNotify("READY=1");
    REQUIRE_FALSE(sent.ok());
    CHECK(sent.status().message().find("/nonexistent-swapd-dir/notify.sock") != std::string::npos);
  }
}

TEST_CASE("WatchdogTimeout follows WATCHDOG_USEC and WATCHDOG_PID", "[unit][notify]") {
  const pid_t self = 4242;
  CHECK(WatchdogTimeout(nullptr, nullptr, self) == 0us);
  CHECK(WatchdogTimeout("30000000", nullptr, self) == 30s);
  CHECK(WatchdogTimeout("30000000", "4242", self) == 30s);
  // Another process's watchdog, e.g. inherited by a backend from swapd's environment.
  CHECK(WatchdogTimeout("30000000", "1", self) == 0us);
  CHECK(WatchdogTimeout("30000000", "42420", self) == 0us);
  // Malformed or meaningless values turn the watchdog off instead of guessing.
  for (const char* usec :
       {"", "0", "-5", "abc", "12s", " 100", "18446744073709551615", "99999999999999999999999"}) {
    INFO("WATCHDOG_USEC=" << usec);
    CHECK(WatchdogTimeout(usec, nullptr, self) == 0us);
  }
  for (const char* pid : {"", "abc", "-4242", "4242 "}) {
    INFO("WATCHDOG_PID=" << pid);
    CHECK(WatchdogTimeout("30000000", pid, self) == 0us);
  }
}

TEST_CASE("SdWatchdogTimeout reads this process's environment", "[unit][notify]") {
  ScopedEnv usec("WATCHDOG_USEC", "500000");
  {
    ScopedEnv pid("WATCHDOG_PID", std::to_string(getpid()));
    CHECK(SdWatchdogTimeout() == 500ms);
  }
  {
    ScopedEnv pid("WATCHDOG_PID", std::to_string(getppid()));
    CHECK(SdWatchdogTimeout() == 0us);
  }
  ScopedEnv no_pid("WATCHDOG_PID", std::nullopt);
  CHECK(SdWatchdogTimeout() == 500ms);
}

}  // namespace
}  // namespace swapd::testing
