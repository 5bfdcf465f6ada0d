// sendLoadingState: a streamed chat request for a model that is not ready gets its answer's head
// at once (200, text/event-stream), then, while a thread of its own waits for the model
// (Router::Acquire), chunks in llama-swap's shape, `data: {"choices":[{"delta":
// {"reasoning_content":"<text>"}}]}`, that tell how the load goes: a "━━━━━" rule, "swapd loading
// model: <id>", once a second a line with the load's stage, the time so far, the share done and the
// time left (from the backend's output and the model's usual load time, kept across restarts,
// when they tell: "tensors: 3.0 s, 42%, about 4.1 s left (usually 7.5 s)"), or, while it waits,
// why, with llama-swap's "Queue position: #N" when other batches wait before it; then
// "Done! (12.34s)" and the rule
// again, after which the backend's own event stream follows in the same response (its status and
// headers are lost, as in llama-swap). A load that fails ends the stream with an OpenAI-shaped
// `data: {"error":...}` event. A client that leaves withdraws the request from the queue.
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/json_text.h"
#include "frontdoor/error_response.h"
#include "frontdoor/front_door.h"
#include "frontdoor/upstream_proxy.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kLineEvery = std::chrono::seconds(1);
constexpr auto kPoll = std::chrono::milliseconds(200);
constexpr std::string_view kRule = "━━━━━\n";

// One event of the loading text.
std::string Chunk(std::string_view text) {
  nlohmann::json delta = {{"choices", {{{"delta", {{"reasoning_content", text}}}}}}};
  return "data: " + JsonText(delta) + "\n\n";
}

std::string Seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", seconds);
  return text;
}

// The server's context for the proxy inside the stream: it must not defer (the stream is already
// being written), and may block.
class NoDefer final : public RequestContext {
 public:
  explicit NoDefer(RequestContext& server) : server_(server) {}
  bool ShouldDefer() const override { return false; }
  void Defer(DeferredStep) override {}
  void WillBlock() override { server_.WillBlock(); }
  bool ClientGone() const override { return server_.ClientGone(); }
  bool WaitReadable(int fd, std::chrono::milliseconds timeout) override {
    return server_.WaitReadable(fd, timeout);
  }

 private:
  RequestContext& server_;
};

// What the handler, the waiting thread and the stream share.
struct Loading {
  // Set before the thread starts, read-only after.
  std::string model;
  std::string route;
  HttpRequest req;  // a copy: the stream outlives the handler
  std::string target;
  std::string body;
  TimeoutsConfig timeouts;  // the model's
  Clock::time_point arrived;

  std::mutex mu;
  std::condition_variable done_cv;
  std::optional<Result<Lease>> lease;         // guarded by mu; set once by the thread
  std::atomic<bool> gone{false};              // the client left: the wait gives up
  std::shared_ptr<InflightRequest> inflight;  // set before the thread starts; may be null
  std::thread waiter;

  // The stream's own (one server thread at a time).
  enum class Phase { kHead, kWaiting, kRelay } phase = Phase::kHead;
  Clock::time_point next_line;
  std::string told;    // the loading text sent so far: the start of the answer's capture
  HttpResponse inner;  // the backend's answer, relayed
};

}  // namespace

std::string FrontDoor::LoadingLine(const std::string& model) {
  const std::vector<ModelSnapshot> models = router_.Snapshot();
  std::string stopping;
  for (const ModelSnapshot& s : models) {
    if (s.id != model && s.backend.state == BackendState::kStopping) {
      stopping += (stopping.empty() ? "" : ", ") + s.id;
    }
  }
  for (const ModelSnapshot& s : models) {
    if (s.id != model) continue;
    if (s.backend.state != BackendState::kStarting) {
      std::string line =
          stopping.empty() ? "waiting to start" : "waiting for " + stopping + " to stop";
      if (s.queued > 1) line += " (" + std::to_string(s.queued) + " requests queued for it)";
      // llama-swap's words, so that what reads its text finds them.
      if (const int position = router_.QueuePosition(model); position > 1) {
        line += "\nQueue position: #" + std::to_string(position) + " ";
      }
      return line + "\n";
    }
    const auto took = Clock::now() - s.backend.since;
    const LoadEstimate estimate =
        EstimateLoad(s.backend.load, std::chrono::duration_cast<std::chrono::milliseconds>(took),
                     s.expected_load.count() > 0 ? std::optional(s.expected_load) : std::nullopt);
    std::string line =
        std::string(estimate.stage) + ": " + Seconds(std::chrono::duration<double>(took).count());
    if (estimate.progress) {
      line += ", " + std::to_string(static_cast<int>(*estimate.progress * 100)) + "%";
    }
    if (estimate.eta_seconds) line += ", about " + Seconds(*estimate.eta_seconds) + " left";
    if (s.expected_load.count() > 0) {
      line += " (usually " + Seconds(std::chrono::duration<double>(s.expected_load).count()) + ")";
    }
    return line + "\n";
  }
  return "waiting\n";
}

void FrontDoor::DispatchWithLoadingState(const ModelConfig& model, const HttpRequest& req,
                                         std::string_view target, std::string_view body,
                                         HttpResponse& res, bool evict_protected,
                                         std::shared_ptr<InflightRequest> inflight) {
  auto state = std::make_shared<Loading>();
  state->inflight = std::move(inflight);
  state->model = model.id;
  state->route = req.path;
  state->req = req;
  state->target = std::string(target);
  state->body = std::string(body);
  state->timeouts = model.timeouts;
  state->arrived = Clock::now();
  const Clock::time_point deadline = state->arrived + settings_.acquire_timeout;
  state->waiter = std::thread([this, state, deadline, evict_protected] {
    Result<Lease> lease = router_.Acquire(
        state->model, deadline,
        [&state] {
          return state->gone.load() || (state->inflight && state->inflight->cancelled());
        },
        evict_protected);
    std::lock_guard lock(state->mu);
    state->lease.emplace(std::move(lease));
    state->done_cv.notify_all();
  });

  res.status = 200;
  res.headers.Set("Cache-Control", "no-cache");
  res.headers.Set("X-Accel-Buffering", "no");
  res.SetStream(
      "text/event-stream",
      [this, state](BodyWriter& out, RequestContext& ctx) {
        NoDefer no_defer(ctx);
        Loading& s = *state;
        auto tell = [&s, &out](const std::string& text) {
          s.told += text;
          return out.Write(text);
        };
        switch (s.phase) {
          case Loading::Phase::kHead:
            s.phase = Loading::Phase::kWaiting;
            s.next_line = Clock::now() + kLineEvery;
            return tell(Chunk(kRule) + Chunk("swapd loading model: " + s.model + "\n") +
                        Chunk(LoadingLine(s.model)));
          case Loading::Phase::kWaiting:
            break;
          case Loading::Phase::kRelay:
            return s.inner.stream->next(out, no_defer);
        }
        std::optional<Result<Lease>> lease;
        {
          std::unique_lock lock(s.mu);
          s.done_cv.wait_for(lock, kPoll, [&s] { return s.lease.has_value(); });
          if (s.lease) lease.emplace(std::move(*s.lease));
        }
        if (!lease) {
          if (Clock::now() < s.next_line) return true;
          s.next_line += kLineEvery;
          return tell(Chunk(LoadingLine(s.model)));
        }
        const double took = std::chrono::duration<double>(Clock::now() - s.arrived).count();
        if (!lease->ok()) {
          const Status why =
              s.inflight && s.inflight->cancelled()
                  ? Status::Error(ErrorCode::kUnavailable, s.inflight->CancelledMessage())
                  : lease->status();
          HttpResponse error;
          SetErrorResponse(error, why);
          Refused(s.model, s.route, s.req, error, why.message(), s.arrived);
          out.Write(Chunk("\n") + "data: " + ErrorJson(why) + "\n\n");
          out.End();
          return true;
        }
        char done[48];
        std::snprintf(done, sizeof done, "Done! (%.2fs)\n", took);
        if (!tell(Chunk("\n") + Chunk(done) + Chunk(kRule) + Chunk(" \n"))) return false;
        ProxyRequest request = ProxyRequestOf(s.req, s.target, s.body, s.route, s.inflight);
        request.capture_prefix = s.told;
        proxy_->Forward(LocalUpstream(s.timeouts, std::move(*lease).value()), request, s.inner,
                        no_defer,
                        /*may_retry=*/false);
        if (s.inner.stream) {
          s.phase = Loading::Phase::kRelay;
          return true;
        }
        // A whole answer: an error (already JSON) or a backend that did not stream.
        const bool error = s.inner.status >= 400;
        out.Write(error ? "data: " + s.inner.body + "\n\n" : s.inner.body);
        out.End();
        return true;
      },
      [state](bool whole) {
        state->gone = true;
        if (state->waiter.joinable()) state->waiter.join();
        if (state->inner.stream) {
          state->inner.stream->whole = whole;
          state->inner.stream.reset();  // its own end: the lease goes, the exchange is recorded
        }
      });
}

}  // namespace swapd
