// sendLoadingState: a streamed chat request for a model that is not ready gets its answer's head
// at once (200, text/event-stream), then, while the stream's producer waits for the model inside
// the Dispatcher's one path (Router::Acquire), chunks in llama-swap's shape, `data: {"choices":
// [{"delta":{"reasoning_content":"<text>"}}]}`, that tell how the load goes: a "━━━━━" rule,
// "swapd loading model: <id>", once a second a line with the load's stage, the time so far, the
// share done and the time left (from the backend's output and the model's usual load time, kept
// across restarts, when they tell: "tensors: 3.0 s, 42%, about 4.1 s left (usually 7.5 s)"), or,
// while it waits, why, with llama-swap's "Queue position: #N" when other batches wait before it;
// then "Done! (12.34s)" and the rule again, after which the backend's own event stream follows in
// the same response (its status and headers are lost, as in llama-swap). A load that fails ends
// the stream with an OpenAI-shaped `data: {"error":...}` event. A client that leaves withdraws
// the request from the queue.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "frontdoor/dispatch_job.h"
#include "frontdoor/error_response.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kLineEvery = std::chrono::seconds(1);
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

// One line of the loading text about `model` now ("tensors: 3.0 s, 42%, about 4.1 s left
// (usually 7.5 s)", or why it waits and its queue position), from the Router's view.
std::string LoadingLine(const Router& router, const std::string& model) {
  const std::vector<ModelSnapshot> models = router.Snapshot();
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
      if (const int position = router.QueuePosition(model); position > 1) {
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

// The server's context for the dispatch inside the stream: it must not defer (the stream is
// already being written), and may block.
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

// The stream's own state, next to its job. Used by the stream's producer, one call at a time.
struct LoadingStream {
  enum class Phase { kHead, kLoad, kRelay } phase = Phase::kHead;
  HttpResponse inner;  // the backend's answer, relayed
};

}  // namespace

void Dispatcher::StreamWhileLoading(std::shared_ptr<Job> job, HttpResponse& res) {
  auto stream = std::make_shared<LoadingStream>();
  res.status = 200;
  res.headers.Set("Cache-Control", "no-cache");
  res.headers.Set("X-Accel-Buffering", "no");
  res.SetStream(
      "text/event-stream",
      [this, job, stream](BodyWriter& out, RequestContext& ctx) {
        NoDefer no_defer(ctx);
        const std::string& model = job->to.model->id;
        auto tell = [&job, &out](const std::string& text) {
          job->told += text;
          return out.Write(text);
        };
        switch (stream->phase) {
          case LoadingStream::Phase::kHead:
            stream->phase = LoadingStream::Phase::kLoad;
            return tell(Chunk(kRule) + Chunk("swapd loading model: " + model + "\n") +
                        Chunk(LoadingLine(router_, model)));
          case LoadingStream::Phase::kLoad:
            break;
          case LoadingStream::Phase::kRelay:
            return stream->inner.stream->next(out, no_defer);
        }
        // The wait, on this thread: a line of the loading text every second meanwhile.
        Clock::time_point next_line = Clock::now() + kLineEvery;
        bool write_failed = false;
        const Waiting waiting = [&] {
          ctx.WillBlock();
          if (Clock::now() >= next_line) {
            next_line += kLineEvery;
            write_failed = write_failed || !tell(Chunk(LoadingLine(router_, model)));
          }
          job->client_gone = write_failed || ctx.ClientGone();
          return job->client_gone || (job->inflight && job->inflight->cancelled());
        };
        job->admitted = [&] {
          char done[48];
          std::snprintf(done, sizeof done, "Done! (%.2fs)\n",
                        std::chrono::duration<double>(Clock::now() - job->arrived).count());
          return tell(Chunk("\n") + Chunk(done) + Chunk(kRule) + Chunk(" \n"));
        };
        const Status refused = Run(*job, stream->inner, no_defer, waiting);
        job->admitted = nullptr;
        if (!refused.ok()) {
          HttpResponse error;
          Refuse(*job, refused, error);
          out.Write(Chunk("\n") + "data: " + error.body + "\n\n");
          out.End();
          return true;
        }
        if (stream->inner.stream) {
          stream->phase = LoadingStream::Phase::kRelay;
          return true;
        }
        // A whole answer: an error (already JSON) or a backend that did not stream.
        const bool failed = stream->inner.status >= 400;
        out.Write(failed ? "data: " + stream->inner.body + "\n\n" : stream->inner.body);
        out.End();
        return true;
      },
      [stream](bool whole) {
        if (stream->inner.stream) {
          stream->inner.stream->whole = whole;
          stream->inner.stream.reset();  // its own end: the lease goes, the exchange is recorded
        }
      });
}

}  // namespace swapd
