// HttpServer: swapd's front door. Routes OpenAI-compatible requests to the model named in them
// (JSON body, multipart form field, or ?model=), through the Router (which swaps models) and the
// UpstreamProxy (which streams the answer back), and serves the llama-swap admin routes
// (/v1/models, /running, /unload, /api/models/unload, /api/config/reload, /upstream/{model}/...,
// /health; the admin handlers live in admin_routes.cpp), /api/models, /metrics and the log routes
// (/logs, /logs/stream[/{model}], in log_routes.cpp).
// Thread safe: handlers run on the threads of an Http1Server; Stop() may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "backends/router.h"
#include "config/config.h"
#include "config/status.h"
#include "daemon/config_reloader.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace swapd {

class UpstreamProxy;
class Http1Server;
class Metrics;
class LogHub;

struct HttpServerSettings {
  size_t max_body_bytes = 256u << 20;  // larger request bodies get 413
  // How long a request may wait for its model (queueing behind a swap, plus the start itself).
  std::chrono::seconds acquire_timeout{3600};
  // A backend that sends nothing for this long fails the request (--upstream-idle-timeout).
  std::chrono::seconds upstream_idle_timeout{7200};
};

class HttpServer {
 public:
  HttpServer(std::shared_ptr<const Config> config, Router& router, Metrics* metrics,
             HttpServerSettings settings = {});
  ~HttpServer();

  // Binds the listening socket; `port` 0 picks an ephemeral port (see port()).
  Status Bind(const std::string& host, int port);
  int port() const { return port_; }
  // Serves until Stop(). Blocks.
  void Run();
  void Stop();
  // New requests get 503 from now on (graceful shutdown); in-flight ones continue.
  void SetShuttingDown() { shutting_down_ = true; }

  // Replaces the configuration used to resolve model ids (reload).
  void SetConfig(std::shared_ptr<const Config> config);
  // What POST /api/config/reload runs; without one it answers 503.
  void SetReloadHandler(std::function<ReloadOutcome()> reload);
  // Where /logs and /logs/stream read from; without one /logs is empty. Call before Run().
  void SetLogHub(std::shared_ptr<LogHub> hub);

 private:
  std::shared_ptr<const Config> config() const;
  // Routes one request (after the checks every route shares: shutdown, API keys).
  void Handle(const httplib::Request& req, httplib::Response& res);
  // Finds the request's route and runs its handler (404 when there is none).
  void Route(const httplib::Request& req, httplib::Response& res);
  void HandleJsonInference(const httplib::Request& req, httplib::Response& res);
  void HandleMultipartInference(const httplib::Request& req, httplib::Response& res);
  void HandleUpstream(const httplib::Request& req, httplib::Response& res, const std::string& rest);
  void HandleListModels(const httplib::Request& req, httplib::Response& res);
  void HandleRunning(const httplib::Request& req, httplib::Response& res);
  void HandleUnload(httplib::Response& res, const std::string& model);
  void HandleReload(const httplib::Request& req, httplib::Response& res);
  void HandleApiModels(const httplib::Request& req, httplib::Response& res);
  void HandleLogs(const httplib::Request& req, httplib::Response& res);
  void HandleLogStream(const httplib::Request& req, httplib::Response& res,
                       const std::string& model);
  // Waits for the model and hands the request to the proxy.
  // `target` and `body` are only read, and outlive the call.
  void Dispatch(const ModelConfig& model, const httplib::Request& req, std::string_view target,
                std::string_view body, httplib::Response& res);
  Status DescribeBackendFailure(const std::string& model_id, const std::string& what);
  // Waits until neither the Router nor the backend count the model ready (the backend's info
  // then), or nullopt at `timeout`.
  std::optional<BackendInfo> WaitUntilNotReady(const std::string& model_id,
                                               std::chrono::milliseconds timeout);

  Router& router_;
  Metrics* metrics_;  // may be null; not owned
  HttpServerSettings settings_;
  mutable std::mutex config_mu_;
  std::shared_ptr<const Config> config_;   // Guarded by config_mu_
  std::function<ReloadOutcome()> reload_;  // Guarded by config_mu_
  std::unique_ptr<UpstreamProxy> proxy_;
  std::shared_ptr<LogHub> log_hub_;  // may be null; set before Run()
  std::unique_ptr<Http1Server> server_;
  std::atomic<bool> shutting_down_{false};
  int port_ = 0;
};

}  // namespace swapd
