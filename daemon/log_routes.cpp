// The log routes: GET /logs (the history of swapd and every model), GET /logs/stream (the
// history, unless ?no-history, then live lines, chunked, until the client leaves or swapd stops)
// and GET /logs/stream/{model} (that model's lines only). A stream waits for lines with a short
// timeout, so that a stopping server and a shutdown end it promptly.
#include <chrono>

#include "daemon/log_hub.h"
#include "daemon/service_routes.h"
#include "frontdoor/error_response.h"
#include "frontdoor/model_id.h"

namespace swapd {
namespace {

// How long a stream waits for a line before it looks at the server's state again.
constexpr auto kStreamPoll = std::chrono::milliseconds(200);

void StreamLogs(FrontDoor& door, LogHub& hub, const HttpRequest& req, HttpResponse& res,
                const std::string& model_name) {
  std::string source;  // "": every source
  if (!model_name.empty()) {
    auto cfg = door.config();
    const ModelConfig* model = cfg->FindModel(model_name);
    if (!model) return SetErrorResponse(res, UnknownModelError(model_name));
    source = model->id;
  }
  std::shared_ptr<LogHub::Subscription> subscription =
      hub.Subscribe(source, !req.Param("no-history").has_value());
  res.headers.Set("Cache-Control", "no-cache");
  res.SetStream("text/plain; charset=utf-8",
                [&door, subscription](BodyWriter& out, RequestContext&) {
                  if (door.shutting_down()) {
                    out.End();
                    return true;
                  }
                  std::vector<LogLine> lines = subscription->Next(kStreamPoll);
                  if (lines.empty()) return true;
                  return out.Write(FormatLogLines(lines));
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
