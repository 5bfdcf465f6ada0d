#include "http/http1_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "http/listen_socket.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kListenerId = ~uint64_t{0};
constexpr uint64_t kWakeId = ~uint64_t{0} - 1;
constexpr uint32_t kConnectionEvents = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
// Added to a connection's id for the socket its deferred response waits for.
constexpr uint64_t kAwaitTag = uint64_t{1} << 62;
// Responses are deferred only while more requests than this are in flight: with one, blocking
// in recv wakes this very thread, warm, where the epoll set would wake whichever thread waits.
constexpr int kDeferAbove = 1;

// Arms again, for one more event, a socket that is already in the epoll set. ThreadSanitizer
// orders an EPOLL_CTL_ADD before the epoll_wait that reports the socket, but not an
// EPOLL_CTL_MOD: the thread that takes the event and closes the socket would be reported as
// racing with this call. TSan builds re-add it instead, which the kernel treats the same.
int Rearm(int epoll_fd, int fd, epoll_event& ev) {
#if defined(__SANITIZE_THREAD__)
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
  return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
#else
  return epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &ev);
#endif
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct Http1Server::Connection {
  using State = ConnectionState;
  Connection(uint64_t id_, std::unique_ptr<ClientConnection> io_) : id(id_), io(std::move(io_)) {}
  const uint64_t id;
  const std::unique_ptr<ClientConnection> io;
  State state = State::kParked;  // guarded by connections_mu_
  Clock::time_point deadline;    // guarded by connections_mu_; parked or awaiting until then
  // The request being answered and its response; while kAwaiting also the step it waits for
  // (no thread has any of them then).
  HttpRequest req;
  // Destroyed, not assigned, after each request: that ends a streamed answer (BodyStream).
  std::optional<HttpResponse> res;
  DeferredStep step;
};

// The context of one handler call (or deferred step) on a server thread.
class Http1Server::Scope final : public RequestContext {
 public:
  Scope(Http1Server& server, const ClientConnection& client, bool may_defer)
      : server_(server), client_(client), may_defer_(may_defer) {}
  bool ShouldDefer() const override {
    return may_defer_ && server_.in_flight_.load(std::memory_order_relaxed) > kDeferAbove;
  }
  void Defer(DeferredStep step) override { taken = std::move(step); }
  void WillBlock() override { server_.threads_->WillBlock(); }
  bool ClientGone() const override { return client_.ClientGone(); }
  bool WaitReadable(int fd, std::chrono::milliseconds timeout) override {
    // The stop eventfd stays readable once Stop() wrote it.
    pollfd p[3] = {{fd, POLLIN, 0}, {client_.fd(), POLLRDHUP, 0}, {server_.wake_fd_, POLLIN, 0}};
    return ::poll(p, 3, static_cast<int>(timeout.count())) > 0 && (p[0].revents & POLLIN) != 0 &&
           p[1].revents == 0 && p[2].revents == 0;
  }
  DeferredStep taken;

 private:
  Http1Server& server_;
  const ClientConnection& client_;
  const bool may_defer_;
};

Http1Server::Http1Server(Http1ServerSettings settings, Handler handler, Completion on_complete)
    : settings_(settings), handler_(std::move(handler)), on_complete_(std::move(on_complete)) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  // Level-triggered and never read: once Stop() made it readable, every epoll_wait sees it.
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeId;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  threads_ = std::make_unique<EpollThreads>(
      epoll_fd_, kWakeId, settings_.max_threads, [this](uint64_t id) { OnEvent(id); },
      [this] { Sweep(); });
}

Http1Server::~Http1Server() {
  Stop();
  {
    std::unique_lock lock(run_mu_);
    run_cv_.wait(lock, [&] { return !running_; });  // Run() has joined every thread
  }
  threads_.reset();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  ::close(wake_fd_);
  ::close(epoll_fd_);
}

Status Http1Server::Bind(const std::string& host, int port) {
  Result<ListenSocket> listening = Listen(host, port);
  if (!listening.ok()) return listening.status();
  listen_fd_ = listening.value().fd;
  port_ = listening.value().port;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLONESHOT;
  ev.data.u64 = kListenerId;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  return Status::Ok();
}

void Http1Server::Run() {
  {
    std::lock_guard lock(run_mu_);
    running_ = true;
  }
  threads_->Run();
  {
    std::unordered_map<uint64_t, std::shared_ptr<Connection>> idle;  // closed after the lock
    std::lock_guard connections_lock(connections_mu_);
    idle.swap(connections_);
  }
  std::lock_guard lock(run_mu_);
  running_ = false;
  run_cv_.notify_all();
}

void Http1Server::Stop() {
  stopping_ = true;
  threads_->Stop();
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

void Http1Server::OnEvent(uint64_t id) {
  if (id == kListenerId) {
    AcceptAll();
  } else if ((id & kAwaitTag) != 0) {
    if (auto c = Take(id & ~kAwaitTag, Connection::State::kAwaiting)) Resume(c, WaitEnd::kReady);
  } else if (auto c = Take(id, Connection::State::kParked)) {
    Serve(c);
  }
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
    c->deadline = Clock::now() + settings_.read_timeout;
    epoll_event ev{};
    ev.events = kConnectionEvents;
    ev.data.u64 = id;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0) connections_.emplace(id, std::move(c));
  }
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLONESHOT;
  ev.data.u64 = kListenerId;
  Rearm(epoll_fd_, listen_fd_, ev);
}

std::shared_ptr<Http1Server::Connection> Http1Server::Take(uint64_t id, ConnectionState state) {
  std::lock_guard lock(connections_mu_);
  auto it = connections_.find(id);
  // Closed by Sweep meanwhile, or (a stale event) already taken and waiting for something else.
  if (it == connections_.end() || it->second->state != state) return nullptr;
  it->second->state = Connection::State::kBusy;
  return it->second;
}

void Http1Server::Serve(const std::shared_ptr<Connection>& c) {
  try {
    ServeRequests(c);
  } catch (const std::exception& e) {
    Drop(c, e);
  }
}

void Http1Server::ServeRequests(const std::shared_ptr<Connection>& c) {
  for (;;) {
    const ClientConnection::Progress progress = c->io->ReadRequest(c->req);
    if (progress == ClientConnection::Progress::kClosed || stopping_) return Remove(c);
    if (progress == ClientConnection::Progress::kWaiting) {
      if (c->io->refused()) return Park(c, c->io->drain_deadline());
      return Park(c, Clock::now() +
                         (c->io->in_request() ? settings_.read_timeout : settings_.idle_timeout));
    }
    ++in_flight_;
    c->res.emplace().status = 200;  // unless the handler says otherwise
    if (!Respond(c, [this, &c](RequestContext& context) {
          handler_(c->req, *c->res, context);
          return DeferredStep();
        })) {
      return;  // deferred
    }
    if (!Finish(c)) return;
  }
}

bool Http1Server::Respond(const std::shared_ptr<Connection>& c,
                          const std::function<DeferredStep(RequestContext&)>& work,
                          bool may_defer) {
  Scope scope(*this, *c->io, may_defer);
  DeferredStep next;
  try {
    next = work(scope);
    if (next.done()) next = std::move(scope.taken);
  } catch (const std::exception& e) {
    next = DeferredStep();
    Fail(c, e.what());
  } catch (...) {
    next = DeferredStep();
    Fail(c, "unknown exception");
  }
  if (next.done()) return true;
  Await(c, std::move(next));
  return false;
}

bool Http1Server::Finish(const std::shared_ptr<Connection>& c) {
  // Answered, if not yet written: a client that gets the answer and sends its next request at
  // once is no second request in flight.
  --in_flight_;
  bool keep_alive;
  // A streamed answer holds this thread until its end; while it waits for the backend, it may
  // look whether the client is still there.
  if (c->res->streamed()) threads_->WillBlock();
  Scope scope(*this, *c->io, false);
  keep_alive = c->io->WriteResponse(*c->res, stopping_, scope);
  if (on_complete_) on_complete_(c->req, *c->res);  // (after the write: not in the client's wait)
  // An idle connection holds neither the request nor the answer.
  c->req = HttpRequest();
  c->res.reset();
  if (!keep_alive) {
    Remove(c);
    return false;
  }
  // Nothing of the next request is here yet. With no other request in flight, look once more
  // before re-arming: a lone client often sends its next request while this thread finishes up
  // (or preempts it to do so), and re-arming a socket that is already readable wakes another
  // thread for it. Under load such a read would mostly find nothing: re-arm straight away.
  if (!c->io->in_request() && in_flight_.load(std::memory_order_relaxed) > 0) {
    Park(c, Clock::now() + settings_.idle_timeout);
    return false;
  }
  return true;
}

void Http1Server::Await(const std::shared_ptr<Connection>& c, DeferredStep step) {
  const int fd = step.fd;
  // Re-armed if a wait before this one left it in the set, else added (and then left there).
  // The flag belongs to the step's owner: it is touched only before the step is published.
  const bool in_set = step.in_set != nullptr && *step.in_set;
  if (step.in_set != nullptr) *step.in_set = true;
  {
    std::lock_guard lock(connections_mu_);
    c->state = Connection::State::kAwaiting;
    c->deadline = step.deadline;
    c->step = std::move(step);
  }
  // Armed outside the lock, as in Park; from here on another thread may have the connection.
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
  ev.data.u64 = c->id | kAwaitTag;
  auto add = [&] { return epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev); };
  auto rearm = [&] { return Rearm(epoll_fd_, fd, ev); };
  if ((in_set ? rearm() : add()) == 0) return;
  int error = errno;
  if (error == (in_set ? ENOENT : EEXIST) && (in_set ? add() : rearm()) == 0) return;
  // Not seen with a socket (ENOMEM, or ENOSPC beyond fs.epoll.max_user_watches). The step then
  // waits on this thread.
  spdlog::warn(
      "connection {}: cannot wait for the backend's socket in the epoll set ({}): "
      "waiting on a thread",
      c->id, std::strerror(errno));
  if (Take(c->id, Connection::State::kAwaiting)) Resume(c, WaitEnd::kReady, false);
}

void Http1Server::Resume(const std::shared_ptr<Connection>& c, WaitEnd end, bool may_defer) {
  try {
    // The socket stays in the epoll set, disarmed: the next wait re-arms it.
    DeferredStep step = std::move(c->step);
    // One reference captured: small enough for std::function to hold without allocating.
    struct Call {
      DeferredStep& step;
      HttpResponse& res;
      WaitEnd end;
    } call{step, *c->res, end};
    auto resume = [&call](RequestContext& context) {
      return call.step.resume(call.res, call.end, context);
    };
    if (!Respond(c, resume, may_defer)) return;
    // Released before the write; what must outlive it, the response keeps (keep_until_written).
    step = DeferredStep();
    if (Finish(c)) ServeRequests(c);
  } catch (const std::exception& e) {
    Drop(c, e);
  }
}

void Http1Server::Park(const std::shared_ptr<Connection>& c, Clock::time_point deadline) {
  {
    std::lock_guard lock(connections_mu_);
    c->state = Connection::State::kParked;
    c->deadline = deadline;
  }
  // Re-armed outside the lock (every request passes here). Until then no event can hand the
  // connection to another thread, and Sweep leaves it alone (its deadline is ahead); the fd stays
  // open while `c` is held.
  epoll_event ev{};
  ev.events = kConnectionEvents;
  ev.data.u64 = c->id;
  if (stopping_ || Rearm(epoll_fd_, c->io->fd(), ev) != 0) Remove(c);
}

void Http1Server::Remove(const std::shared_ptr<Connection>& c) {
  std::lock_guard lock(connections_mu_);
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c->io->fd(), nullptr);
  connections_.erase(c->id);
}

void Http1Server::Fail(const std::shared_ptr<Connection>& c, const std::string& what) {
  spdlog::error("internal error while handling {} {}: {}", c->req.method, c->req.path, what);
  HttpResponse& res = *c->res;
  res = HttpResponse();
  settings_.limits.render_error(res, 500, "internal error: " + what);
}

void Http1Server::Drop(const std::shared_ptr<Connection>& c, const std::exception& e) {
  spdlog::error("connection {}: {}", c->id, e.what());
  Remove(c);
}

void Http1Server::Sweep() {
  int64_t due = next_sweep_.load();
  const int64_t now_ms = NowMs();
  if (now_ms < due || !next_sweep_.compare_exchange_strong(due, now_ms + 1000)) return;
  std::vector<std::shared_ptr<Connection>> expired;    // closed once the lock is released
  std::vector<std::shared_ptr<Connection>> timed_out;  // their backend said nothing in time
  std::vector<std::shared_ptr<Connection>> awaiting;   // is their client still there?
  const auto now = Clock::now();
  {
    std::lock_guard lock(connections_mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      Connection& c = *it->second;
      if (c.state == Connection::State::kParked && c.deadline < now) {
        epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.io->fd(), nullptr);
        expired.push_back(std::move(it->second));
        it = connections_.erase(it);
        continue;
      }
      if (c.state == Connection::State::kAwaiting) {
        if (c.deadline < now) {
          c.state = Connection::State::kBusy;
          timed_out.push_back(it->second);
        } else {
          awaiting.push_back(it->second);
        }
      }
      ++it;
    }
  }
  for (const auto& c : timed_out) Resume(c, WaitEnd::kTimedOut);
  // Looked at outside the lock (a system call each); one that the backend's answer resumed
  // meanwhile is no longer awaiting, and Take leaves it alone.
  for (const auto& c : awaiting) {
    if (c->io->ClientGone() && Take(c->id, Connection::State::kAwaiting)) {
      Resume(c, WaitEnd::kClientGone);
    }
  }
}

}  // namespace swapd
