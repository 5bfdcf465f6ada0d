// RequestContext: what a handler may ask of the server that runs it, passed to every handler call
// and deferred step (no thread-local state):
//  - WillBlock(): the handler is about to wait on its thread (a model starting, a backend's
//    answer); the server, which keeps few threads, starts another for the other connections.
//  - ClientGone(): whether the client has closed its connection, for a long wait that may give up.
//  - ShouldDefer() / Defer(step): wait for a socket (the backend's answer) in the server's epoll
//    set instead of on the thread. With many requests in flight, going back to the epoll set
//    beats a sleep and a wake-up per wait; the server runs the step on whichever thread wakes
//    when the socket is readable (or the deadline passed, or the client left), and writes the
//    response once a step completes it.
//  - WaitReadable(fd, timeout): a streamed body's producer waits for its source (an eventfd) with
//    no timer to wake it meanwhile: the wait also ends when the client leaves or the server stops.
// A context lives for one handler call or step, on that call's thread.
#pragma once

#include <chrono>
#include <functional>

#include "http/message.h"

namespace swapd {

// Why a deferred step runs.
enum class WaitEnd {
  kReady,       // its socket is readable
  kTimedOut,    // its deadline passed
  kClientGone,  // the client closed its connection: the step gives up (the response goes nowhere)
};

struct DeferredStep {
  // Runs on a server thread once the wait ends. Either completes `res` and returns an empty step,
  // or returns the next step to wait for. It may defer again or block, as the handler could.
  using Resume = std::function<DeferredStep(HttpResponse& res, WaitEnd end, RequestContext& ctx)>;

  int fd = -1;
  // Whether `fd` is in the server's epoll set already (waited for before, disarmed since): the
  // server then re-arms it rather than adding it. Owned by whoever owns `fd` (closing `fd` takes
  // it out of the set); null: the server finds out itself.
  bool* in_set = nullptr;
  std::chrono::steady_clock::time_point deadline;
  Resume resume;  // empty: the response is complete

  bool done() const { return !resume; }
};

class RequestContext {
 public:
  virtual ~RequestContext() = default;
  // Whether waiting in the server's epoll set pays now (enough requests are in flight).
  virtual bool ShouldDefer() const = 0;
  // Takes the rest of the response; the handler then returns at once and leaves `res` alone.
  virtual void Defer(DeferredStep step) = 0;
  virtual void WillBlock() = 0;
  // One system call.
  virtual bool ClientGone() const = 0;
  // Waits until `fd` is readable (true), or the timeout passed, the client left or the server is
  // stopping (false). The default looks at `fd` only.
  virtual bool WaitReadable(int fd, std::chrono::milliseconds timeout);
};

// The context of code that runs outside a server (tests, tools): never defers, never gone.
class NoRequestContext final : public RequestContext {
 public:
  bool ShouldDefer() const override { return false; }
  void Defer(DeferredStep) override {}
  void WillBlock() override {}
  bool ClientGone() const override { return false; }
};

}  // namespace swapd
