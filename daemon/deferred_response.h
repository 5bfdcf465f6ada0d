// Deferred responses: how a handler running on an Http1Server thread waits for a socket (its
// backend's answer) without holding the thread. Blocking in recv costs a thread a sleep and a
// wake-up per wait; with many requests in flight the server's threads do better going back to
// the epoll set, where another connection's event is usually ready. The handler hands the rest
// of its work to the server as a DeferredStep; a server thread runs it when the socket is
// readable (or its deadline passed), and writes the response once a step completes it. A handler
// that must block instead (a model starting, a streamed answer) says so first (BeforeBlocking),
// so that the server, which keeps only a few threads, starts another for the other connections.
// A wait on the thread can ask whether the client is still there (CurrentClientGone); one in the
// epoll set is ended for it by the server (WaitEnd::kClientGone).
#pragma once

#include <httplib.h>

#include <chrono>
#include <functional>

namespace swapd {

// Why a deferred step runs.
enum class WaitEnd {
  kReady,       // its socket is readable
  kTimedOut,    // its deadline passed
  kClientGone,  // the client closed its connection: the step gives up (res goes nowhere)
};

struct DeferredStep {
  // Runs on a server thread once the wait ends (see WaitEnd). Either completes `res` and
  // returns an empty step, or returns the next step to wait for. It may defer again
  // (ShouldDefer) or block, as the handler could.
  using Resume = std::function<DeferredStep(httplib::Response& res, WaitEnd end)>;

  int fd = -1;
  // Whether `fd` is in the server's epoll set already (waited for before, disarmed since): the
  // server then re-arms it rather than adding it, and leaves it there after the wait. Owned by
  // whoever owns `fd` (closing `fd` takes it out of the set); null: the server finds out itself,
  // at the cost of a failed system call now and then.
  bool* in_set = nullptr;
  std::chrono::steady_clock::time_point deadline;
  Resume resume;  // empty: the response is complete

  bool done() const { return !resume; }
};

// Implemented by the server that runs the handler.
class Deferrer {
 public:
  virtual ~Deferrer() = default;
  // Whether waiting in the server's epoll set pays now (enough requests are in flight).
  virtual bool ShouldDefer() const = 0;
  // Takes the rest of the response; the handler then returns at once and leaves `res` alone.
  virtual void Defer(DeferredStep step) = 0;
  // The handler is about to wait (for a model to start, for a backend on this thread): the
  // server makes sure that another thread keeps serving the other connections meanwhile.
  virtual void WillBlock() = 0;
  // Whether the client of the request has closed its connection (one system call).
  virtual bool ClientGone() const = 0;
};

// The Deferrer of the request the calling thread is handling; null outside a handler of a server
// that defers (then a handler blocks).
Deferrer* CurrentDeferrer();

// Makes `deferrer` the calling thread's Deferrer while it lives (used by the server).
class DeferrerScope {
 public:
  explicit DeferrerScope(Deferrer* deferrer);
  ~DeferrerScope();
  DeferrerScope(const DeferrerScope&) = delete;
  DeferrerScope& operator=(const DeferrerScope&) = delete;

 private:
  Deferrer* previous_;
};

// Tells the calling thread's server, if any, that the thread is about to wait.
inline void BeforeBlocking() {
  if (Deferrer* d = CurrentDeferrer()) d->WillBlock();
}

// Whether the client of the request the calling thread is handling has gone; false outside a
// server's handler. For a handler that waits long on its thread: it may then give up.
inline bool CurrentClientGone() {
  Deferrer* d = CurrentDeferrer();
  return d != nullptr && d->ClientGone();
}

// The calling thread's Deferrer when it wants the wait now; null otherwise (the handler then
// blocks).
inline Deferrer* DeferrerIfWorthwhile() {
  Deferrer* d = CurrentDeferrer();
  return d != nullptr && d->ShouldDefer() ? d : nullptr;
}

}  // namespace swapd
