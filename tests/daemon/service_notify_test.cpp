// sd_notify messages (daemon/service_notify.h) as systemd would see them: the tests bind a unix
// datagram socket in a temporary directory and point NOTIFY_SOCKET at it, for the real swapd
// binary (READY, STATUS, WATCHDOG, STOPPING) and in-process (RELOADING/READY, the heartbeat).
#include "daemon/service_notify.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/http_wait.h"
#include "tests/support/scoped_env.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;

// A unix datagram socket in a fresh temporary directory, standing in for systemd's notify socket.
// Like systemd it reads all the time (on its own thread): a sender blocks once a handful of
// datagrams wait unread (net.unix.max_dgram_qlen). Keeps every message received, in order.
class NotifySocket {
 public:
  NotifySocket() {
    char tmpl[] = "/tmp/swapd-notify-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/notify.sock";
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    REQUIRE(path_.size() < sizeof(addr.sun_path));
    path_.copy(addr.sun_path, path_.size());
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    reader_ = std::thread([this] { Read(); });
  }
  ~NotifySocket() {
    stop_ = true;
    reader_.join();
    close(fd_);
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  const std::string& path() const { return path_; }

  // Returns the first message after the previous match that satisfies `match`; nullopt when
  // `timeout` passes first. Messages up to the one returned are consumed: the next call looks
  // only at later ones.
  std::optional<std::string> WaitFor(const std::function<bool(const std::string&)>& match,
                                     std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock lock(mu_);
    while (true) {
      while (next_ < messages_.size()) {
        std::string message = messages_[next_++];
        lock.unlock();  // `match` may call Count()
        bool matched = match(message);
        lock.lock();
        if (matched) return message;
      }
      if (!arrived_.wait_until(lock, deadline, [&] { return next_ < messages_.size(); })) {
        return std::nullopt;
      }
    }
  }
  // Waits for a message holding the line `line` exactly.
  std::optional<std::string> WaitForLine(const std::string& line,
                                         std::chrono::milliseconds timeout) {
    return WaitFor([&](const std::string& m) { return HasLine(m, line); }, timeout);
  }

  static bool HasLine(const std::string& message, const std::string& line) {
    return ("\n" + message + "\n").find("\n" + line + "\n") != std::string::npos;
  }
  // The value of `KEY=` in a message, or nullopt.
  static std::optional<std::string> Field(const std::string& message, const std::string& key) {
    std::string text = "\n" + message;
    size_t at = text.find("\n" + key + "=");
    if (at == std::string::npos) return std::nullopt;
    size_t begin = at + key.size() + 2;
    return text.substr(begin, text.find('\n', begin) - begin);
  }

  // How many messages so far hold the line `line`.
  size_t Count(const std::string& line) {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (const auto& m : messages_) n += HasLine(m, line) ? 1 : 0;
    return n;
  }
  // Every message so far, for failure messages.
  std::string Transcript() {
    std::lock_guard lock(mu_);
    std::string out;
    for (const auto& m : messages_) out += "[" + m + "]\n";
    return out;
  }

 private:
  void Read() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;  // the timeout only bounds how late stop_ is seen
      char buffer[4096];
      ssize_t n = recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
      if (n < 0) continue;
      std::lock_guard lock(mu_);
      messages_.emplace_back(buffer, static_cast<size_t>(n));
      arrived_.notify_all();
    }
  }

  std::string dir_;
  std::string path_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable arrived_;
  std::vector<std::string> messages_;  // Guarded by mu_
  size_t next_ = 0;  // the first message WaitFor has not looked at. Guarded by mu_
};

// swapd on an ephemeral loopback port, NOTIFY_SOCKET at `socket`, with `env` on top.
struct NotifiedSwapd {
  std::unique_ptr<Subprocess> process;
  std::string base_url;
  std::string dir;
  ~NotifiedSwapd() {
    process.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

void StartNotifiedSwapd(const std::string& yaml, const NotifySocket& socket,
                        const std::vector<std::string>& env, NotifiedSwapd* out) {
  char tmpl[] = "/tmp/swapd-notify-cfg-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  out->dir = tmpl;
  std::ofstream(out->dir + "/config.yaml") << yaml;
  SubprocessSpec spec;
  spec.argv = {SWAPD_BINARY, "--config", out->dir + "/config.yaml", "--listen", "127.0.0.1:0"};
  spec.env = env;
  spec.env.push_back("NOTIFY_SOCKET=" + socket.path());
  spec.unset_env = {"WATCHDOG_PID", "WATCHDOG_USEC"};
  auto started = Subprocess::Start(spec);
  REQUIRE(started.ok());
  out->process = std::move(started).value();
  auto line = out->process->WaitForLineMatching(
      [](std::string_view l) { return l.find("listening on http://") != std::string_view::npos; },
      20s);
  INFO(out->process->Output());
  REQUIRE(line);
  size_t colon = line->find(':', line->find("http://") + 7);
  out->base_url = "http://127.0.0.1:" + std::to_string(std::atoi(line->c_str() + colon + 1));
}

TEST_CASE("ModelsStatusText names running, starting and failed models", "[unit][notify]") {
  auto model = [](const std::string& id, BackendState state) {
    ModelSnapshot s;
    s.id = id;
    s.backend.state = state;
    return s;
  };
  CHECK(ModelsStatusText({}) == "no model running");
  CHECK(ModelsStatusText({model("a", BackendState::kStopped),
                          model("b", BackendState::kStopping)}) == "no model running");
  CHECK(ModelsStatusText({model("a", BackendState::kReady), model("b", BackendState::kStarting),
                          model("c", BackendState::kReady), model("d", BackendState::kFailed)}) ==
        "running: a, c; starting: b; failed: d");
  CHECK(ModelsStatusText({model("x", BackendState::kStarting)}) == "starting: x");
}

TEST_CASE("reload notifications and the heartbeat, in-process", "[unit][notify]") {
  NotifySocket socket;
  ScopedEnv notify("NOTIFY_SOCKET", socket.path());
  ScopedEnv watchdog("WATCHDOG_USEC", "100000");
  ScopedEnv watchdog_pid("WATCHDOG_PID", std::to_string(getpid()));

  NotifyReloading();
  auto reloading = socket.WaitForLine("RELOADING=1", 10s);
  INFO(socket.Transcript());
  REQUIRE(reloading);
  auto usec = NotifySocket::Field(*reloading, "MONOTONIC_USEC");
  REQUIRE(usec);
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  uint64_t sent = std::stoull(*usec);
  uint64_t now_usec = static_cast<uint64_t>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
  CHECK(sent <= now_usec);
  CHECK(now_usec - sent < 60ull * 1000000);  // CLOCK_MONOTONIC, not the wall clock
  CHECK(NotifySocket::Field(*reloading, "STATUS").value_or("").rfind("reloading", 0) == 0);

  NotifyReloaded();
  auto ready = socket.WaitForLine("READY=1", 10s);
  REQUIRE(ready);
  CHECK(NotifySocket::Field(*ready, "STATUS").value_or("").rfind("serving", 0) == 0);

  {
    std::atomic<int> polls{0};
    ServiceHeartbeat heartbeat(
        [&] { return ++polls < 3 ? std::string("no model running") : "running: m1"; }, 20ms);
    CHECK(heartbeat.watchdog_interval() == 50ms);
    REQUIRE(socket.WaitFor([](const std::string& m) { return m == "STATUS=serving; running: m1"; },
                           10s));
    REQUIRE(
        socket.WaitFor([&](const std::string&) { return socket.Count("WATCHDOG=1") >= 3; }, 10s));
  }  // the destructor stops and joins the thread (ASan would report a leak or a use after free)
  CHECK(socket.Count("STATUS=serving; no model running") == 1);  // sent only when it changes
}

TEST_CASE("the heartbeat sends no watchdog pings for another process's watchdog",
          "[unit][notify]") {
  NotifySocket socket;
  ScopedEnv notify("NOTIFY_SOCKET", socket.path());
  ScopedEnv watchdog("WATCHDOG_USEC", "100000");
  ScopedEnv watchdog_pid("WATCHDOG_PID", std::to_string(getppid()));
  NotifyReady();
  ServiceHeartbeat heartbeat([] { return std::string("running: other"); }, 20ms);
  CHECK(heartbeat.watchdog_interval() == 0us);
  // Pings, when enabled, go out before the first STATUS on the same thread, so this is enough.
  REQUIRE(
      socket.WaitFor([](const std::string& m) { return m.find("running: other") != m.npos; }, 10s));
  INFO(socket.Transcript());
  CHECK(socket.Count("WATCHDOG=1") == 0);
}

TEST_CASE("swapd under a notify socket: READY, STATUS with models, WATCHDOG, STOPPING",
          "[integration][notify]") {
  NotifySocket socket;
  int port = FreeLoopbackPort();
  std::string yaml = "healthCheckTimeout: 30\nmodels:\n" + FakeModelYaml("nt-model", port);
  NotifiedSwapd swapd;
  StartNotifiedSwapd(yaml, socket, {"WATCHDOG_USEC=400000"}, &swapd);
  INFO(swapd.process->Output());

  auto ready = socket.WaitForLine("READY=1", 20s);
  INFO(socket.Transcript());
  REQUIRE(ready);
  CHECK(NotifySocket::Field(*ready, "STATUS").value_or("").rfind("serving", 0) == 0);

  HttpReply reply = HttpPost(swapd.base_url, "/v1/chat/completions", ChatBody("nt-model", false),
                             "application/json", 30s);
  REQUIRE(reply.status == 200);
  auto status = socket.WaitFor(
      [](const std::string& m) {
        return NotifySocket::Field(m, "STATUS").value_or("") == "serving; running: nt-model";
      },
      20s);
  REQUIRE(status);

  // WatchdogSec=0.4 s: a ping every 0.2 s.
  REQUIRE(socket.WaitFor([&](const std::string&) { return socket.Count("WATCHDOG=1") >= 3; }, 20s));

  REQUIRE(swapd.process->Signal(SIGTERM));
  auto stopping = socket.WaitForLine("STOPPING=1", 20s);
  REQUIRE(stopping);
  auto exit = swapd.process->WaitForExit(30s);
  REQUIRE(exit);
  CHECK(exit->ExitedWith(0));
}

TEST_CASE("SIGHUP under a notify socket: RELOADING=1 with MONOTONIC_USEC, then READY=1",
          "[integration][notify]") {
  NotifySocket socket;
  int port = FreeLoopbackPort();
  std::string yaml = "healthCheckTimeout: 30\nmodels:\n" + FakeModelYaml("nt-reload", port);
  NotifiedSwapd swapd;
  StartNotifiedSwapd(yaml, socket, {}, &swapd);
  INFO(swapd.process->Output());
  REQUIRE(socket.WaitForLine("READY=1", 20s));

  REQUIRE(swapd.process->Signal(SIGHUP));
  auto reloading = socket.WaitForLine("RELOADING=1", 20s);
  INFO(socket.Transcript());
  REQUIRE(reloading);
  CHECK(NotifySocket::Field(*reloading, "MONOTONIC_USEC").has_value());
  CHECK(NotifySocket::Field(*reloading, "STATUS").value_or("").rfind("reloading", 0) == 0);
  // READY=1 again once the reload is over, and the status says "serving" again.
  auto ready = socket.WaitForLine("READY=1", 20s);
  REQUIRE(ready);
  CHECK(NotifySocket::Field(*ready, "STATUS").value_or("").rfind("serving", 0) == 0);

  REQUIRE(swapd.process->Signal(SIGTERM));
  REQUIRE(socket.WaitForLine("STOPPING=1", 20s));
  auto exit = swapd.process->WaitForExit(30s);
  REQUIRE(exit);
  CHECK(exit->ExitedWith(0));
}

}  // namespace
}  // namespace swapd::testing
