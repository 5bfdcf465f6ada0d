#include "daemon/http1_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "daemon/http_error.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kListenerId = ~uint64_t{0};
constexpr uint64_t kWakeId = ~uint64_t{0} - 1;
constexpr int kInitialThreads = 2;
// A thread that has waited this many 1 s rounds for work ends, if enough others still wait.
constexpr int kIdleRoundsBeforeExit = 30;
constexpr int kSpareThreads = 4;
constexpr uint32_t kConnectionEvents = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

std::string AddressText(const sockaddr_storage& addr, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(addr);
    inet_ntop(AF_INET, &in.sin_addr, text, sizeof(text));
    port = ntohs(in.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
    inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof(text));
    port = ntohs(in6.sin6_port);
  }
  return text;
}

// The 500 answer of a handler that threw.
void Fail(httplib::Response& res, const httplib::Request& req, const std::string& what) {
  spdlog::error("internal error while handling {} {}: {}", req.method, req.path, what);
  res.headers.clear();
  res.content_provider_ = nullptr;
  SetErrorResponse(res, Status::Error(ErrorCode::kInternal, "internal error: " + what));
}

}  // namespace

struct Http1Server::Connection {
  Connection(uint64_t id_, std::unique_ptr<ClientConnection> io_) : id(id_), io(std::move(io_)) {}
  const uint64_t id;
  const std::unique_ptr<ClientConnection> io;
  // Guarded by connections_mu_: waiting in the epoll set for its next request (no thread has it).
  bool parked = false;
  Clock::time_point deadline;  // guarded by connections_mu_; when parked, closed after it
};

Http1Server::Http1Server(Http1ServerSettings settings, Handler handler)
    : settings_(settings), handler_(std::move(handler)) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  // Level-triggered and never read: once Stop() made it readable, every epoll_wait sees it.
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeId;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
}

Http1Server::~Http1Server() {
  Stop();
  {
    std::unique_lock lock(threads_mu_);
    threads_cv_.wait(lock, [&] { return !running_; });  // Run() has joined every thread
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  ::close(wake_fd_);
  ::close(epoll_fd_);
}

Status Http1Server::Bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
      rc != 0) {
    return Status::Error(ErrorCode::kUnavailable,
                         "cannot listen on " + host + ": " + gai_strerror(rc));
  }
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      listen_fd_ = fd;
    } else {
      why = std::strerror(errno);
      ::close(fd);
    }
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0) {
    return Status::Error(ErrorCode::kUnavailable,
                         "cannot listen on " + host + ":" + service + " (" + why + ")");
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  AddressText(bound, port_);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLONESHOT;
  ev.data.u64 = kListenerId;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  return Status::Ok();
}

void Http1Server::Run() {
  {
    std::lock_guard lock(threads_mu_);
    running_ = true;
  }
  for (int i = 0; i < kInitialThreads; ++i) AddThread();
  std::unique_lock lock(threads_mu_);
  threads_cv_.wait(lock, [&] { return threads_.empty(); });
  for (auto& t : finished_) t.join();
  finished_.clear();
  lock.unlock();
  {
    std::unordered_map<uint64_t, std::shared_ptr<Connection>> idle;  // closed after the lock
    std::lock_guard connections_lock(connections_mu_);
    idle.swap(connections_);
  }
  lock.lock();
  running_ = false;
  threads_cv_.notify_all();
}

void Http1Server::Stop() {
  stopping_ = true;
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

void Http1Server::AddThread() {
  std::lock_guard lock(threads_mu_);
  for (auto& t : finished_) t.join();
  finished_.clear();
  if (stopping_ || threads_.size() >= settings_.max_threads) return;
  threads_.emplace_back();
  auto self = std::prev(threads_.end());
  *self = std::thread([this, self] { ThreadMain(self); });
}

void Http1Server::ThreadMain(std::list<std::thread>::iterator self) {
  int idle_rounds = 0;
  while (!stopping_) {
    epoll_event ev{};
    ++waiting_;
    const int n = epoll_wait(epoll_fd_, &ev, 1, 1000);
    const int still_waiting = --waiting_;
    if (stopping_ || (n == 1 && ev.data.u64 == kWakeId)) break;
    Sweep();
    if (n <= 0) {
      if (n == 0 && ++idle_rounds >= kIdleRoundsBeforeExit && still_waiting >= kSpareThreads) {
        break;
      }
      continue;
    }
    idle_rounds = 0;
    // This thread may be busy for long: someone else must keep waiting.
    if (still_waiting == 0) AddThread();
    if (ev.data.u64 == kListenerId) {
      AcceptAll();
    } else {
      Serve(ev.data.u64);
    }
  }
  std::lock_guard lock(threads_mu_);
  finished_.splice(finished_.end(), threads_, self);
  threads_cv_.notify_all();
}

void Http1Server::AcceptAll() {
  for (int i = 0; i < 64 && !stopping_; ++i) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    int fd =
        accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        spdlog::warn("cannot accept a connection: {} (raise the open-files limit)",
                     std::strerror(errno));
        // The listener stays readable: without a pause every thread would spin on it.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      break;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int remote_port = 0;
    std::string remote = AddressText(addr, remote_port);
    std::lock_guard lock(connections_mu_);
    const uint64_t id = next_id_++;
    auto c = std::make_shared<Connection>(
        id,
        std::make_unique<ClientConnection>(fd, std::move(remote), remote_port, settings_.limits));
    c->parked = true;
    c->deadline = Clock::now() + settings_.read_timeout;
    epoll_event ev{};
    ev.events = kConnectionEvents;
    ev.data.u64 = id;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0) connections_.emplace(id, std::move(c));
  }
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLONESHOT;
  ev.data.u64 = kListenerId;
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listen_fd_, &ev);
}

void Http1Server::Serve(uint64_t id) {
  std::shared_ptr<Connection> c;
  {
    std::lock_guard lock(connections_mu_);
    auto it = connections_.find(id);
    if (it == connections_.end() || !it->second->parked) return;  // closed by Sweep meanwhile
    c = it->second;
    c->parked = false;
  }
  try {
    for (;;) {
      httplib::Request req;
      const ClientConnection::Progress progress = c->io->ReadRequest(req);
      if (progress == ClientConnection::Progress::kClosed || stopping_) return Remove(c);
      if (progress == ClientConnection::Progress::kWaiting) {
        if (c->io->refused()) return Park(c, c->io->drain_deadline());
        return Park(c, Clock::now() +
                           (c->io->in_request() ? settings_.read_timeout : settings_.idle_timeout));
      }
      httplib::Response res;
      res.status = 200;  // unless the handler says otherwise
      try {
        handler_(req, res);
      } catch (const std::exception& e) {
        Fail(res, req, e.what());
      } catch (...) {
        Fail(res, req, "unknown exception");
      }
      if (!c->io->WriteResponse(res, stopping_)) return Remove(c);
      // Nothing of the next request is here yet: wait for it in the epoll set straight away
      // rather than after a read that would find nothing.
      if (!c->io->in_request()) return Park(c, Clock::now() + settings_.idle_timeout);
    }
  } catch (const std::exception& e) {  // e.g. out of memory while reading or writing
    spdlog::error("connection {}: {}", c->id, e.what());
    Remove(c);
  }
}

void Http1Server::Park(const std::shared_ptr<Connection>& c, Clock::time_point deadline) {
  {
    std::lock_guard lock(connections_mu_);
    c->parked = true;
    c->deadline = deadline;
  }
  // Re-armed outside the lock (every request passes here). Until then no event can hand the
  // connection to another thread, and Sweep leaves it alone (its deadline is ahead); the fd stays
  // open while `c` is held.
  epoll_event ev{};
  ev.events = kConnectionEvents;
  ev.data.u64 = c->id;
  if (stopping_ || epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c->io->fd(), &ev) != 0) Remove(c);
}

void Http1Server::Remove(const std::shared_ptr<Connection>& c) {
  std::lock_guard lock(connections_mu_);
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c->io->fd(), nullptr);
  connections_.erase(c->id);
}

void Http1Server::Sweep() {
  int64_t due = next_sweep_.load();
  const int64_t now_ms = NowMs();
  if (now_ms < due || !next_sweep_.compare_exchange_strong(due, now_ms + 1000)) return;
  std::vector<std::shared_ptr<Connection>> expired;  // closed once the lock is released
  const auto now = Clock::now();
  std::lock_guard lock(connections_mu_);
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (it->second->parked && it->second->deadline < now) {
      epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second->io->fd(), nullptr);
      expired.push_back(std::move(it->second));
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace swapd
