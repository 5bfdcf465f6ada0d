#include "daemon/http_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon/auth.h"
#include "daemon/deferred_response.h"
#include "daemon/filters.h"
#include "daemon/http1_server.h"
#include "daemon/http_error.h"
#include "daemon/metrics.h"
#include "daemon/model_id.h"
#include "daemon/multipart.h"
#include "daemon/upstream_proxy.h"

namespace swapd {
namespace {

// More request headers than any client sends; beyond it 431.
constexpr size_t kMaxRequestHeaders = 256;
// An idle keep-alive connection is closed after this long (it holds no thread meanwhile).
constexpr auto kIdleTimeout = std::chrono::seconds(60);

// The POST routes whose JSON body names the model (llama-swap's list).
constexpr const char* kJsonRoutes[] = {
    "/v1/chat/completions", "/v1/completions", "/v1/embeddings",
    "/v1/responses",        "/v1/messages",    "/v1/messages/count_tokens",
    "/v1/rerank",           "/rerank",         "/v1/reranking",
    "/reranking",           "/completion",     "/infill",
    "/v1/audio/speech"};

std::optional<std::string> QueryModel(const httplib::Request& req) {
  if (!req.has_param("model")) return std::nullopt;
  return req.get_param_value("model");
}

}  // namespace

HttpServer::HttpServer(std::shared_ptr<const Config> config, Router& router, Metrics* metrics,
                       HttpServerSettings settings)
    : router_(router), metrics_(metrics), settings_(settings), config_(std::move(config)) {
  Http1ServerSettings server_settings;
  server_settings.limits.max_body_bytes = settings_.max_body_bytes;
  server_settings.limits.max_header_fields = kMaxRequestHeaders;
  server_settings.idle_timeout = kIdleTimeout;
  server_ = std::make_unique<Http1Server>(
      server_settings,
      [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); },
      [](const httplib::Request& req, const httplib::Response& res) {
        spdlog::info("{} {} {} {}", req.remote_addr, req.method, req.path, res.status);
      });
  proxy_ = std::make_unique<UpstreamProxy>(
      [this](const std::string& model_id, const std::string& what) {
        return DescribeBackendFailure(model_id, what);
      },
      [this](const ProxyRecord& record) {
        if (metrics_) metrics_->RecordRequest(record);
      },
      settings_.upstream_idle_timeout);
}

HttpServer::~HttpServer() { Stop(); }

std::shared_ptr<const Config> HttpServer::config() const {
  std::lock_guard lock(config_mu_);
  return config_;
}

void HttpServer::SetConfig(std::shared_ptr<const Config> config) {
  std::lock_guard lock(config_mu_);
  config_ = std::move(config);
}

Status HttpServer::Bind(const std::string& host, int port) {
  Status bound = server_->Bind(host, port);
  port_ = server_->port();
  return bound;
}

void HttpServer::Run() { server_->Run(); }

void HttpServer::Stop() {
  if (server_) server_->Stop();
}

std::optional<BackendInfo> HttpServer::WaitUntilNotReady(const std::string& model_id,
                                                         std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // The Router first: the Backend's state turns before the Router hears of the exit, and an
  // Acquire in between would be admitted to the dead process.
  if (!router_.AwaitNotReady(model_id, deadline)) return std::nullopt;
  for (;;) {
    for (const auto& m : router_.Snapshot()) {
      if (m.id == model_id && m.backend.state != BackendState::kReady) return m.backend;
    }
    if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Status HttpServer::DescribeBackendFailure(const std::string& model_id, const std::string& what) {
  // A backend that crashed is usually noticed by its Backend a moment after the proxy sees the
  // connection break: give it a short while so the message can carry the exit status.
  BeforeBlocking();
  std::optional<BackendInfo> info = WaitUntilNotReady(model_id, std::chrono::seconds(1));
  std::string state_text;
  if (info) {
    state_text = std::string("backend ") + ToString(info->state);
    if (!info->last_error.empty()) state_text += ": " + info->last_error;
  }
  std::string message = "model \"" + model_id + "\": " + what;
  if (!state_text.empty()) {
    message += "; " + state_text;
  } else {
    std::string tail = router_.LogTail(model_id, 10);
    if (!tail.empty()) message += "; last log lines:\n" + tail;
  }
  return Status::Error(ErrorCode::kBackendFailed, message);
}

void HttpServer::Dispatch(const ModelConfig& model, const httplib::Request& req,
                          std::string_view target, std::string_view body, httplib::Response& res) {
  auto deadline = std::chrono::steady_clock::now() + settings_.acquire_timeout;
  // The route label of the request counters: /upstream/{model}/... all count as "/upstream".
  const std::string route = req.path.rfind("/upstream/", 0) == 0 ? "/upstream" : req.path;
  for (int attempt = 0;; ++attempt) {
    // Called only while the request waits (for a start, a swap, a free slot), every 50 ms: the
    // server learns that this thread blocks, and a request whose client went away leaves the
    // queue, as at its deadline.
    bool client_gone = false;
    auto cancelled = [&client_gone] {
      BeforeBlocking();
      return client_gone = CurrentClientGone();
    };
    Result<Lease> lease = router_.Acquire(model.id, deadline, cancelled);
    if (!lease.ok()) {
      SetErrorResponse(res, lease.status());
      if (client_gone) res.status = kClientClosedRequest;
      if (metrics_) metrics_->CountRequest(model.id, route, res.status);
      return;
    }
    ProxyRequest request;
    request.method = req.method;
    request.target = target;
    request.headers = &req.headers;
    request.body = body;
    request.route = route;  // counted with the record of the exchange
    if (proxy_->Forward(std::move(lease).value(), request, res, /*may_retry=*/attempt == 0) ==
        UpstreamProxy::Delivery::kDone) {
      break;
    }
    // The backend refused the connection, nothing was sent: its process has most likely just
    // died. Once the Router has noticed (milliseconds; longer on a loaded machine), Acquire
    // starts it again. A backend that refuses while alive costs this one request the wait.
    spdlog::warn("model {}: the backend refused the connection; starting it again to retry",
                 model.id);
    WaitUntilNotReady(model.id, std::chrono::seconds(10));
  }
}

void HttpServer::HandleJsonInference(const httplib::Request& req, httplib::Response& res) {
  Result<JsonRequest> parsed = ParseJsonRequest(req.body, QueryModel(req));
  if (!parsed.ok()) return SetErrorResponse(res, parsed.status());
  auto cfg = config();
  const ModelConfig* model = cfg->FindModel(parsed.value().model);
  if (!model) return SetErrorResponse(res, UnknownModelError(parsed.value().model));
  std::optional<std::string> filtered;
  if (HasFilters(*model)) {  // only then is the body parsed into a document
    nlohmann::json document = ParseJsonDocument(req.body);
    filtered = ApplyFilters(*model, document);
  }
  Dispatch(*model, req, req.target, filtered ? *filtered : req.body, res);
}

void HttpServer::HandleMultipartInference(const httplib::Request& req, httplib::Response& res) {
  // The body is forwarded as it came, except for the model field's value under useModelName.
  std::optional<std::string> boundary = MultipartBoundary(req.get_header_value("Content-Type"));
  FormScan form;
  if (boundary) {
    form = ScanForm(req.body, *boundary, "model");
    if (!form.well_formed) {
      return SetErrorResponse(
          res, Status::Error(ErrorCode::kInvalidArgument, "malformed multipart/form-data body"));
    }
  }
  std::string model_id = form.field ? req.body.substr(form.field->offset, form.field->size) : "";
  if (model_id.empty()) model_id = QueryModel(req).value_or("");
  if (model_id.empty()) return SetErrorResponse(res, NoModelError());
  auto cfg = config();
  const ModelConfig* model = cfg->FindModel(model_id);
  if (!model) return SetErrorResponse(res, UnknownModelError(model_id));
  if (!form.field || model->use_model_name.empty()) {
    return Dispatch(*model, req, req.target, req.body, res);
  }
  std::string body = req.body;
  body.replace(form.field->offset, form.field->size, model->use_model_name);
  Dispatch(*model, req, req.target, body, res);
}

void HttpServer::HandleUpstream(const httplib::Request& req, httplib::Response& res,
                                const std::string& rest) {
  // /upstream/{model}/{path...}: model ids may contain '/', so the longest prefix that names a
  // model wins.
  auto cfg = config();
  const ModelConfig* model = nullptr;
  std::string path;
  for (size_t cut = rest.size();; cut = rest.rfind('/', cut - 1)) {
    if (cut == std::string::npos || cut == 0) break;
    model = cfg->FindModel(rest.substr(0, cut));
    if (model) {
      path = rest.substr(cut);
      break;
    }
  }
  if (!model) return SetErrorResponse(res, UnknownModelError(rest.substr(0, rest.find('/'))));
  if (path.empty()) {
    // Relative links of a backend's web page need the trailing slash.
    res.set_redirect(req.path + "/", 301);
    return;
  }
  std::string target = path;
  size_t query = req.target.find('?');
  if (query != std::string::npos) target += req.target.substr(query);
  Dispatch(*model, req, target, req.body, res);
}

void HttpServer::Handle(const httplib::Request& req, httplib::Response& res) {
  if (req.path == "/health") {
    Route(req, res);
  } else if (shutting_down_) {
    SetErrorResponse(res, Status::Error(ErrorCode::kUnavailable, "swapd is shutting down"));
  } else if (!IsAuthorized(config()->api_keys, req.get_header_value("Authorization"),
                           req.get_header_value("x-api-key"))) {
    SetErrorResponse(res, Status::Error(ErrorCode::kUnauthorized,
                                        "missing or invalid API key: send it as "
                                        "'Authorization: Bearer KEY' or 'x-api-key: KEY'"));
  } else {
    Route(req, res);
  }
}

void HttpServer::Route(const httplib::Request& req, httplib::Response& res) {
  const std::string& path = req.path;
  // What follows `prefix` in the path, when there is something.
  auto tail = [&path](std::string_view prefix) -> std::optional<std::string> {
    if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) {
      return std::nullopt;
    }
    return path.substr(prefix.size());
  };
  if (auto rest = tail("/upstream/")) return HandleUpstream(req, res, *rest);
  if (req.method == "GET" || req.method == "HEAD") {
    if (path == "/health") return res.set_content("OK", "text/plain");
    if (path == "/v1/models" || path == "/models") return HandleListModels(req, res);
    if (path == "/running") return HandleRunning(req, res);
    if (path == "/unload") return HandleUnload(res, "");
    if (path == "/api/models") return HandleApiModels(req, res);
    if (path == "/logs") return HandleLogs(req, res);
    if (path == "/logs/stream") return HandleLogStream(req, res, "");
    if (auto model = tail("/logs/stream/")) return HandleLogStream(req, res, *model);
    if (path == "/metrics") {
      return res.set_content(metrics_ ? metrics_->RenderPrometheus(router_.Snapshot()) : "",
                             "text/plain; version=0.0.4");
    }
  } else if (req.method == "POST") {
    for (const char* route : kJsonRoutes) {
      if (path == route) return HandleJsonInference(req, res);
    }
    if (path == "/v1/audio/transcriptions") return HandleMultipartInference(req, res);
    if (path == "/api/models/unload") return HandleUnload(res, "");
    if (auto model = tail("/api/models/unload/")) return HandleUnload(res, *model);
    if (path == "/api/config/reload") return HandleReload(req, res);
  }
  SetErrorResponse(res, Status::Error(ErrorCode::kNotFound, "no route " + req.method + " " + path));
}

}  // namespace swapd
