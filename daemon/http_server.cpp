#include "daemon/http_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "daemon/auth.h"
#include "daemon/filters.h"
#include "daemon/http_error.h"
#include "daemon/listen_backlog.h"
#include "daemon/metrics.h"
#include "daemon/model_id.h"
#include "daemon/thread_pool.h"
#include "daemon/upstream_proxy.h"

namespace swapd {
namespace {

// More request headers than any client sends; beyond it 431.
constexpr size_t kMaxRequestHeaders = 256;

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

std::string RandomBoundary() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const char* digits = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string b = "swapd-";
  for (int i = 0; i < 24; ++i) b.push_back(digits[rng() % 36]);
  return b;
}

// Rebuilds a multipart/form-data body from the fields cpp-httplib parsed (it does not keep the
// raw body of a multipart request).
std::string BuildMultipart(const httplib::MultipartFormDataMap& files, const std::string& boundary,
                           const std::string& model_override) {
  std::string body;
  for (const auto& [name, part] : files) {
    body += "--" + boundary + "\r\n";
    body += "Content-Disposition: form-data; name=\"" + part.name + "\"";
    if (!part.filename.empty()) body += "; filename=\"" + part.filename + "\"";
    body += "\r\n";
    if (!part.content_type.empty()) body += "Content-Type: " + part.content_type + "\r\n";
    body += "\r\n";
    body += (name == "model" && !model_override.empty()) ? model_override : part.content;
    body += "\r\n";
  }
  body += "--" + boundary + "--\r\n";
  return body;
}

}  // namespace

HttpServer::HttpServer(std::shared_ptr<const Config> config, Router& router, Metrics* metrics,
                       HttpServerSettings settings)
    : router_(router),
      metrics_(metrics),
      settings_(settings),
      config_(std::move(config)),
      server_(std::make_unique<httplib::Server>()) {
  proxy_ = std::make_unique<UpstreamProxy>(
      [this](const std::string& model_id, const std::string& what) {
        return DescribeBackendFailure(model_id, what);
      },
      [this](const ProxyRecord& record) {
        if (metrics_) metrics_->RecordRequest(record);
      },
      settings_.upstream_idle_timeout);
  InstallRoutes();
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
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
    if (port_ <= 0) return Status::Error(ErrorCode::kUnavailable, "cannot listen on " + host);
  } else {
    if (!server_->bind_to_port(host, port)) {
      return Status::Error(ErrorCode::kUnavailable, "cannot listen on " + host + ":" +
                                                        std::to_string(port) +
                                                        " (address in use or not available)");
    }
    port_ = port;
  }
  RaiseListenBacklog(port_);
  return Status::Ok();
}

void HttpServer::Run() { server_->listen_after_bind(); }

void HttpServer::Stop() {
  if (server_) server_->stop();
}

std::optional<BackendInfo> HttpServer::WaitUntilNotReady(const std::string& model_id,
                                                         std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
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

void HttpServer::Dispatch(const ModelConfig& model, const httplib::Request& req, std::string target,
                          std::string body, httplib::Response& res) {
  auto deadline = std::chrono::steady_clock::now() + settings_.acquire_timeout;
  // The route label of the request counters: /upstream/{model}/... all count as "/upstream".
  const std::string route = req.path.rfind("/upstream/", 0) == 0 ? "/upstream" : req.path;
  for (int attempt = 0;; ++attempt) {
    Result<Lease> lease = router_.Acquire(model.id, deadline);
    if (!lease.ok()) {
      SetErrorResponse(res, lease.status());
      break;
    }
    const bool may_retry = attempt == 0;
    ProxyRequest request;
    request.method = req.method;
    request.target = may_retry ? target : std::move(target);
    request.headers = req.headers;
    request.body = may_retry ? body : std::move(body);
    if (proxy_->Forward(std::move(lease).value(), std::move(request), res, may_retry) ==
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
  if (metrics_) metrics_->CountRequest(model.id, route, res.status);  // status is known by now
}

void HttpServer::HandleJsonInference(const httplib::Request& req, httplib::Response& res) {
  Result<JsonRequest> parsed = ParseJsonRequest(req.body, QueryModel(req));
  if (!parsed.ok()) return SetErrorResponse(res, parsed.status());
  auto cfg = config();
  const ModelConfig* model = cfg->FindModel(parsed.value().model);
  if (!model) return SetErrorResponse(res, UnknownModelError(parsed.value().model));
  std::optional<std::string> filtered = ApplyFilters(*model, parsed.value().document);
  Dispatch(*model, req, req.target, filtered ? std::move(*filtered) : req.body, res);
}

void HttpServer::HandleMultipartInference(const httplib::Request& req, httplib::Response& res) {
  std::string model_id;
  if (req.has_file("model")) model_id = req.get_file_value("model").content;
  if (model_id.empty()) model_id = QueryModel(req).value_or("");
  if (model_id.empty()) return SetErrorResponse(res, NoModelError());
  auto cfg = config();
  const ModelConfig* model = cfg->FindModel(model_id);
  if (!model) return SetErrorResponse(res, UnknownModelError(model_id));
  if (!req.is_multipart_form_data()) {
    return Dispatch(*model, req, req.target, req.body, res);
  }
  std::string boundary = RandomBoundary();
  httplib::Request forwarded = req;
  forwarded.headers.erase("Content-Type");
  forwarded.headers.emplace("Content-Type", "multipart/form-data; boundary=" + boundary);
  Dispatch(*model, forwarded, req.target,
           BuildMultipart(req.files, boundary, model->use_model_name), res);
}

void HttpServer::HandleUpstream(const httplib::Request& req, httplib::Response& res) {
  // /upstream/{model}/{path...}: model ids may contain '/', so the longest prefix that names a
  // model wins.
  std::string rest = req.matches[1];
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

void HttpServer::InstallRoutes() {
  auto& s = *server_;
  s.new_task_queue = [] { return new GrowingThreadPool(4, 4096); };
  s.set_payload_max_length(settings_.max_body_bytes);
  s.set_keep_alive_max_count(10000);
  // Short enough that an idle client does not hold up a graceful shutdown for long.
  s.set_keep_alive_timeout(5);
  s.set_read_timeout(std::chrono::seconds(60));
  s.set_write_timeout(std::chrono::seconds(60));
  s.set_tcp_nodelay(true);

  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // cpp-httplib 0.11 would gzip text/event-stream and hold chunks back in the compressor;
    // swapd's answers go over loopback, so it never compresses.
    const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");
    // cpp-httplib bounds each header line, not their number: a flood ends here, and the
    // connection with it.
    if (req.headers.size() > kMaxRequestHeaders) {
      SetErrorResponse(
          res, Status::Error(ErrorCode::kInvalidArgument,
                             "too many request headers (" + std::to_string(req.headers.size()) +
                                 ", at most " + std::to_string(kMaxRequestHeaders) + ")"));
      res.status = 431;  // Request Header Fields Too Large
      res.set_header("Connection", "close");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
    if (shutting_down_) {
      SetErrorResponse(res, Status::Error(ErrorCode::kUnavailable, "swapd is shutting down"));
      return httplib::Server::HandlerResponse::Handled;
    }
    auto cfg = config();
    if (!IsAuthorized(cfg->api_keys, req.get_header_value("Authorization"),
                      req.get_header_value("x-api-key"))) {
      SetErrorResponse(res, Status::Error(ErrorCode::kUnauthorized,
                                          "missing or invalid API key: send it as "
                                          "'Authorization: Bearer KEY' or 'x-api-key: KEY'"));
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  s.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty() || res.is_chunked_content_provider_) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        if (res.status == 413) {
          SetErrorResponse(res, Status::Error(ErrorCode::kPayloadTooLarge,
                                              "the request body is larger than swapd accepts"));
        } else if (res.status == 404) {
          SetErrorResponse(
              res, Status::Error(ErrorCode::kNotFound, "no route " + req.method + " " + req.path));
        } else if (res.status == 400) {
          SetErrorResponse(res, Status::Error(ErrorCode::kInvalidArgument, "malformed request"));
        } else {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        return httplib::Server::HandlerResponse::Handled;
      }));
  s.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown error";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        spdlog::error("internal error while handling a request: {}", what);
        SetErrorResponse(res, Status::Error(ErrorCode::kInternal, "internal error: " + what));
      });
  s.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    spdlog::info("{} {} {} {}", req.remote_addr, req.method, req.path, res.status);
  });

  s.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("OK", "text/plain");
  });
  for (const char* route : kJsonRoutes) {
    s.Post(route, [this](const httplib::Request& req, httplib::Response& res) {
      HandleJsonInference(req, res);
    });
  }
  s.Post("/v1/audio/transcriptions", [this](const httplib::Request& req, httplib::Response& res) {
    HandleMultipartInference(req, res);
  });
  for (const char* route : {"/v1/models", "/models"}) {
    s.Get(route, [this](const httplib::Request& req, httplib::Response& res) {
      HandleListModels(req, res);
    });
  }
  s.Get("/running", [this](const auto& req, auto& res) { HandleRunning(req, res); });
  s.Get("/unload", [this](const auto& req, auto& res) { HandleUnload(req, res); });
  s.Post("/api/models/unload", [this](const auto& req, auto& res) { HandleUnload(req, res); });
  s.Post("/api/models/unload/(.+)", [this](const auto& req, auto& res) { HandleUnload(req, res); });
  s.Post("/api/config/reload", [this](const auto& req, auto& res) { HandleReload(req, res); });
  s.Get("/api/models", [this](const auto& req, auto& res) { HandleApiModels(req, res); });
  s.Get("/logs", [this](const auto& req, auto& res) { HandleLogs(req, res); });
  s.Get("/logs/stream", [this](const auto& req, auto& res) { HandleLogStream(req, res); });
  s.Get("/logs/stream/(.+)", [this](const auto& req, auto& res) { HandleLogStream(req, res); });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_ ? metrics_->RenderPrometheus(router_.Snapshot()) : "",
                    "text/plain; version=0.0.4");
  });
  auto upstream = [this](const httplib::Request& req, httplib::Response& res) {
    HandleUpstream(req, res);
  };
  s.Get("/upstream/(.+)", upstream);
  s.Post("/upstream/(.+)", upstream);
  s.Put("/upstream/(.+)", upstream);
  s.Patch("/upstream/(.+)", upstream);
  s.Delete("/upstream/(.+)", upstream);
  s.Options("/upstream/(.+)", upstream);
}

}  // namespace swapd
