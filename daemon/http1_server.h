// Http1Server: the front door's HTTP/1.1 server. All connections wait in one epoll set; a pool of
// threads takes turns waiting on it, and the thread that wakes for a connection reads the request
// and runs the handler itself (no hand-off between threads). A handler may block (waiting for a
// model, streaming an answer for minutes): whenever no thread is left waiting, one more is
// started, so /health answers during a thousand streams; extra threads end after a while idle.
// An idle keep-alive connection holds no thread. Thread safe: Stop() may be called from any
// thread.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "config/status.h"
#include "daemon/client_connection.h"

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
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  Http1Server(Http1ServerSettings settings, Handler handler);
  ~Http1Server();
  Http1Server(const Http1Server&) = delete;
  Http1Server& operator=(const Http1Server&) = delete;

  // Binds and listens; `port` 0 picks an ephemeral port (see port()).
  Status Bind(const std::string& host, int port);
  int port() const { return port_; }
  // Serves until Stop(); returns once every thread has finished its request and ended. The
  // destructor waits for a Run() in progress to return.
  void Run();
  // Stops accepting, ends streamed answers between two pieces, closes idle connections.
  void Stop();

 private:
  struct Connection;
  void ThreadMain(std::list<std::thread>::iterator self);
  // Starts one more thread unless at max_threads or stopping.
  void AddThread();
  void AcceptAll();
  void Serve(uint64_t id);
  // Waits for the connection's next request (it holds no thread meanwhile).
  void Park(const std::shared_ptr<Connection>& c, std::chrono::steady_clock::time_point deadline);
  void Remove(const std::shared_ptr<Connection>& c);
  // Closes the parked connections whose deadline has passed.
  void Sweep();

  const Http1ServerSettings settings_;
  const Handler handler_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd made readable by Stop()
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> waiting_{0};  // threads in epoll_wait
  std::atomic<int64_t> next_sweep_{0};

  std::mutex connections_mu_;
  std::unordered_map<uint64_t, std::shared_ptr<Connection>> connections_;  // guarded
  uint64_t next_id_ = 1;                                                   // guarded

  std::mutex threads_mu_;
  std::condition_variable threads_cv_;
  std::list<std::thread> threads_;   // guarded by threads_mu_
  std::list<std::thread> finished_;  // guarded by threads_mu_: ended, not yet joined
  bool running_ = false;             // guarded by threads_mu_: inside Run()
};

}  // namespace swapd
