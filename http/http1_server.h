// Http1Server: the front door's HTTP/1.1 server. All connections wait in one epoll set; a small
// pool of threads (EpollThreads) takes turns waiting on it, and the thread that wakes for a
// connection reads the request and runs the handler itself (no hand-off between threads). An idle
// keep-alive connection holds no thread. While more than one request is in flight, a handler
// waiting for its backend's answer holds none either: it defers the rest of its response (see
// request_context.h) and a thread runs it when the backend's socket is readable. A handler may
// also block (waiting for a model, streaming an answer for minutes): it says so, or the pool's
// watchdog notices, and another thread is started, so /health answers during a thousand streams.
// Thread safe: Stop() may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "base/status.h"
#include "http/client_connection.h"
#include "http/epoll_threads.h"
#include "http/message.h"
#include "http/request_context.h"

namespace swapd {

struct Http1ServerSettings {
  ConnectionLimits limits;
  // An idle keep-alive connection is closed after this long.
  std::chrono::seconds idle_timeout{60};
  // A request that has started to arrive must be complete within this long.
  std::chrono::seconds read_timeout{60};
  size_t max_threads = 4096;
};

class Http1Server {
 public:
  using Handler = std::function<void(const HttpRequest&, HttpResponse&, RequestContext&)>;
  // Called once a response is written (deferred or not; a stream once it ended).
  using Completion = std::function<void(const HttpRequest&, const HttpResponse&)>;

  Http1Server(Http1ServerSettings settings, Handler handler, Completion on_complete = {});
  ~Http1Server();
  Http1Server(const Http1Server&) = delete;
  Http1Server& operator=(const Http1Server&) = delete;

  // Binds and listens; `port` 0 picks an ephemeral port (see port()).
  Status Bind(const std::string& host, int port);
  int port() const { return port_; }
  // Threads serving now (see EpollThreads).
  int threads() const { return threads_->size(); }
  // Serves until Stop(); returns once every thread has finished its request and ended. The
  // destructor waits for a Run() in progress to return.
  void Run();
  // Stops accepting, ends streamed answers between two pieces, closes idle connections.
  void Stop();

 private:
  struct Connection;
  enum class ConnectionState {
    kBusy,      // a thread serves it
    kParked,    // waits in the epoll set for its next request
    kAwaiting,  // its deferred response waits in the epoll set for a backend's socket
  };
  class Scope;
  // Handles what the epoll set returned for `id` (the listener, a connection, a deferred wait).
  void OnEvent(uint64_t id);
  void AcceptAll();
  // The connection `id` if it is in `state`; it is then kBusy, the caller's.
  std::shared_ptr<Connection> Take(uint64_t id, ConnectionState state);
  // A parked connection's socket is readable: serves its requests.
  void Serve(const std::shared_ptr<Connection>& c);
  // The wait of a deferred response ended (its socket is readable, its deadline passed or its
  // client went away). With `may_defer` false the step may not defer again: it waits on this
  // thread.
  void Resume(const std::shared_ptr<Connection>& c, WaitEnd end, bool may_defer = true);
  // Reads, answers and writes requests until the connection must wait.
  void ServeRequests(const std::shared_ptr<Connection>& c);
  // Runs `work` (the handler, or a deferred step of it) on this thread; false when the response
  // was deferred (again).
  bool Respond(const std::shared_ptr<Connection>& c,
               const std::function<DeferredStep(RequestContext&)>& work, bool may_defer = true);
  // The handler (or a step) threw: the response becomes a 500.
  void Fail(const std::shared_ptr<Connection>& c, const std::string& what);
  // Writes the complete response; false when the connection was closed or parked.
  bool Finish(const std::shared_ptr<Connection>& c);
  // Waits for `step.fd` in the epoll set (the connection holds no thread meanwhile).
  void Await(const std::shared_ptr<Connection>& c, DeferredStep step);
  // Waits for the connection's next request (it holds no thread meanwhile).
  void Park(const std::shared_ptr<Connection>& c, std::chrono::steady_clock::time_point deadline);
  void Remove(const std::shared_ptr<Connection>& c);
  // Closes a connection whose thread met an exception (e.g. out of memory while reading).
  void Drop(const std::shared_ptr<Connection>& c, const std::exception& e);
  // Closes the parked connections whose deadline has passed; ends the deferred responses whose
  // deadline has passed or whose client went away.
  void Sweep();

  const Http1ServerSettings settings_;
  const Handler handler_;
  const Completion on_complete_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd made readable by Stop()
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> in_flight_{0};  // requests read and not yet answered
  std::atomic<int64_t> next_sweep_{0};

  std::mutex connections_mu_;
  std::unordered_map<uint64_t, std::shared_ptr<Connection>> connections_;  // guarded
  uint64_t next_id_ = 1;                                                   // guarded

  std::unique_ptr<EpollThreads> threads_;

  std::mutex run_mu_;
  std::condition_variable run_cv_;
  bool running_ = false;  // guarded by run_mu_: inside Run()
};

}  // namespace swapd
