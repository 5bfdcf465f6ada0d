// The log routes: GET /logs (the history of swapd and every model), GET /logs/stream (the
// history, unless ?no-history, then live lines, chunked, until the client leaves or swapd stops)
// and GET /logs/stream/{model} (that model's lines only). A stream sleeps in poll on its
// subscription's fd and the client's socket: no timer wakes it; a shutdown (LogHub::Close) ends it.
#include "api/log_routes.h"

#include <chrono>

#include "api/event_response.h"
#include "frontdoor/error_response.h"
#include "frontdoor/model_id.h"
#include "observe/log_hub.h"

namespace swapd {
namespace {

// The longest a quiet stream sleeps; it wakes sooner for a line, its client's leaving or the stop.
constexpr std::chrono::milliseconds kQuietWait{60'000};

void StreamLogs(FrontDoor& door, LogHub& hub, const HttpRequest& req, HttpResponse& res,
                const std::string& model_name) {
  std::string source;  // "": every source
  if (!model_name.empty()) {
    auto cfg = door.routing().config();
    const ModelConfig* model = cfg->FindModel(model_name);
    if (!model) return SetErrorResponse(res, UnknownModelError(model_name));
    source = model->id;
  }
  std::shared_ptr<LogHub::Subscription> subscription =
      hub.Subscribe(source, !req.Param("no-history").has_value());
  if (subscription->fd() < 0) return SetErrorResponse(res, NoReaderFdError());
  res.headers.Set("Cache-Control", "no-cache");
  res.SetStream(
      "text/plain; charset=utf-8", [&door, subscription](BodyWriter& out, RequestContext& context) {
        if (door.shutting_down()) {
          out.End();
          return true;
        }
        std::vector<LogLine> lines = subscription->Next(std::chrono::milliseconds(0));
        if (!lines.empty()) return out.Write(FormatLogLines(lines));
        return context.WaitReadable(subscription->fd(), kQuietWait) || !context.ClientGone();
      });
}

}  // namespace

void AddLogRoutes(FrontDoor& door, std::shared_ptr<LogHub> hub) {
  door.AddRoute("GET", "/logs", [hub](const HttpRequest&, HttpResponse& res, RequestContext&) {
    res.SetBody(FormatLogLines(hub->History()), "text/plain; charset=utf-8");
  });
  door.AddRoute("GET", "/logs/stream",
                [&door, hub](const HttpRequest& req, HttpResponse& res, RequestContext&) {
                  StreamLogs(door, *hub, req, res, "");
                });
  door.AddRoute("GET", "/logs/stream/",
                [&door, hub](const HttpRequest& req, HttpResponse& res, RequestContext&) {
                  StreamLogs(door, *hub, req, res, req.path.substr(sizeof("/logs/stream/") - 1));
                });
}

}  // namespace swapd
