// The log routes of HttpServer: GET /logs (the history of swapd and every model), GET /logs/stream
// (the history, unless ?no-history, then live lines, chunked, until the client leaves or swapd
// stops) and GET /logs/stream/{model} (that model's lines only). Same threading rules as
// http_server.cpp; a stream's provider waits for lines with a short timeout, so that a stopping
// server and a shutdown end it promptly.
#include <httplib.h>

#include <chrono>

#include "daemon/http_error.h"
#include "daemon/http_server.h"
#include "daemon/log_hub.h"
#include "daemon/model_id.h"

namespace swapd {
namespace {

// How long a stream waits for a line before it looks at the server's state again.
constexpr auto kStreamPoll = std::chrono::milliseconds(200);

}  // namespace

void HttpServer::SetLogHub(std::shared_ptr<LogHub> hub) { log_hub_ = std::move(hub); }

void HttpServer::HandleLogs(const httplib::Request&, httplib::Response& res) {
  res.set_content(log_hub_ ? FormatLogLines(log_hub_->History()) : "", "text/plain; charset=utf-8");
}

void HttpServer::HandleLogStream(const httplib::Request& req, httplib::Response& res,
                                 const std::string& model_name) {
  std::string source;  // "": every source
  if (!model_name.empty()) {
    auto cfg = config();
    const ModelConfig* model = cfg->FindModel(model_name);
    if (!model) return SetErrorResponse(res, UnknownModelError(model_name));
    source = model->id;
  }
  if (!log_hub_) {
    return SetErrorResponse(
        res, Status::Error(ErrorCode::kUnavailable, "logs are not available in this server"));
  }
  std::shared_ptr<LogHub::Subscription> subscription =
      log_hub_->Subscribe(source, !req.has_param("no-history"));
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/plain; charset=utf-8",
                                   [this, subscription](size_t, httplib::DataSink& sink) {
                                     if (shutting_down_) {
                                       sink.done();
                                       return true;
                                     }
                                     std::vector<LogLine> lines = subscription->Next(kStreamPoll);
                                     if (lines.empty()) return true;
                                     std::string text = FormatLogLines(lines);
                                     return sink.write(text.data(), text.size());
                                   });
}

}  // namespace swapd
