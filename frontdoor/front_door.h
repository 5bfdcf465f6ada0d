// FrontDoor: swapd's OpenAI-compatible endpoint. It owns the HTTP server (http/) and routes each
// request: inference routes find the model named in the request (JSON body, multipart form field,
// or ?model=), wait for it through the Router (which swaps models) and hand the request to the
// UpstreamProxy (which streams the answer back); the llama-swap routes (/v1/models, /running,
// /unload, /api/models/unload, /upstream/{model}/..., /health) are answered here; the service's
// own routes (/metrics, /logs, reload, ...) are added by the daemon with AddRoute.
// A chat request, top-down: Handle (shutdown, API key) -> Route -> HandleJsonInference (model id,
// filters) -> Dispatch (Router::Acquire, retry once on a refused connection) ->
// UpstreamProxy::Forward (upstream_proxy.h).
// Thread safe: handlers run on the server's threads; Stop() may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/router.h"
#include "base/status.h"
#include "config/config.h"
#include "frontdoor/inflight_table.h"
#include "frontdoor/peer_monitor.h"
#include "frontdoor/profiles.h"
#include "frontdoor/upstream_proxy.h"
#include "http/message.h"
#include "http/request_context.h"

namespace swapd {

class Http1Server;

struct FrontDoorSettings {
  size_t max_body_bytes = 256u << 20;  // larger request bodies get 413
  // How long a request may wait for its model (queueing behind a swap, plus the start itself).
  std::chrono::seconds acquire_timeout{3600};
  // A backend that sends nothing for this long fails the request (--upstream-idle-timeout).
  std::chrono::seconds upstream_idle_timeout{7200};
  // How often a peer that answers is checked (--peer-check-interval); a down one backs off.
  std::chrono::milliseconds peer_check_interval{std::chrono::seconds(5)};
};

// What the front door reports about the requests it answers (for metrics). Either may be empty;
// both are called on server threads and must be quick.
struct FrontDoorEvents {
  // A request that reached a backend: its whole exchange.
  std::function<void(const ProxyRecord&)> on_proxied;
  // A request answered without reaching a backend (queue timeout, start failure, 429, client
  // gone while it waited, a peer known down): model_id, route, path, status, error, duration.
  std::function<void(const ProxyRecord&)> on_refused;
};

class FrontDoor {
 public:
  using Handler = std::function<void(const HttpRequest&, HttpResponse&, RequestContext&)>;

  FrontDoor(std::shared_ptr<const Config> config, Router& router, FrontDoorEvents events = {},
            FrontDoorSettings settings = {});
  ~FrontDoor();

  // Adds a route answered by `handler`, after the checks every route shares (shutdown, API
  // keys). `path` is matched whole, or as a prefix when it ends with '/'. Call before Run().
  void AddRoute(std::string method, std::string path, Handler handler);

  // Binds the listening socket; `port` 0 picks an ephemeral port (see port()).
  Status Bind(const std::string& host, int port);
  int port() const { return port_; }
  // Serves until Stop(). Blocks.
  void Run();
  void Stop();
  // New requests get 503 from now on (graceful shutdown); in-flight ones continue.
  void SetShuttingDown() { shutting_down_ = true; }
  bool shutting_down() const { return shutting_down_; }

  // The configuration used to resolve model ids; SetConfig replaces it (reload), and no profile
  // is active after it.
  std::shared_ptr<const Config> config() const;
  void SetConfig(std::shared_ptr<const Config> config);
  // The configuration and the active profile ("" for none), read together.
  std::pair<std::shared_ptr<const Config>, std::string> routing() const;

  // The inference requests in flight (/api/events `inflight`, POST /api/inflight/{id}/cancel).
  InflightTable& inflight() { return inflight_; }

 private:
  struct ExtraRoute {
    std::string method;
    std::string path;
    Handler handler;
  };

  // Routes one request (after the checks every route shares: shutdown, API keys).
  void Handle(const HttpRequest& req, HttpResponse& res, RequestContext& ctx);
  // Finds the request's route and runs its handler (404 when there is none).
  void Route(const HttpRequest& req, HttpResponse& res, RequestContext& ctx);
  void HandleJsonInference(const HttpRequest& req, HttpResponse& res, RequestContext& ctx);
  void HandleMultipartInference(const HttpRequest& req, HttpResponse& res, RequestContext& ctx);
  void HandleUpstream(const HttpRequest& req, HttpResponse& res, RequestContext& ctx,
                      const std::string& rest);
  void HandleListModels(HttpResponse& res);
  void HandleRunning(HttpResponse& res);
  void HandleUnload(HttpResponse& res, const std::string& model);
  // POST /models/load (`load`) and POST /models/unload, as llama.cpp's router answers them.
  void HandleLoad(const HttpRequest& req, HttpResponse& res, bool load);
  // The model a request for `requested` goes to: ResolveModel (profiles.h), with a selector's
  // target chosen from the Router's view of the targets.
  ResolvedModel Resolve(const Config& config, const std::string& profile,
                        const std::string& requested);
  void HandleListProfiles(HttpResponse& res);
  // GET /api/peers: each peer's state, latency and models.
  void HandleListPeers(HttpResponse& res);
  // The /v1/models entries of the peers' models.
  void AddPeerModels(const Config& config, int64_t created,
                     std::map<std::string, nlohmann::json>& sorted);
  // Hands a request for a peer's model to the proxy, or answers 503 at once when the peer is
  // down. `target` and `body` as for Dispatch.
  void DispatchToPeer(const Config& config, const PeerModelRef& ref, const HttpRequest& req,
                      std::string_view target, std::string_view body, HttpResponse& res,
                      RequestContext& ctx);
  void HandleSetProfile(const HttpRequest& req, HttpResponse& res);
  // POST /api/inflight/{id}/cancel: {"msg":"ok"}, or 404.
  void HandleCancel(const std::string& id, HttpResponse& res);
  // The in-flight entry of a request for `model` sent on as `target`, when that is an inference
  // route (llama-swap tracks no other); null otherwise.
  std::shared_ptr<InflightRequest> Track(const HttpRequest& req, const std::string& model,
                                         std::string_view target);
  // Waits for the model and hands the request to the proxy. `target` and `body` are only read,
  // and outlive the call. With `loading_state` (sendLoadingState applies to the request) and the
  // model not ready, answers at once with DispatchWithLoadingState's stream.
  void Dispatch(const ModelConfig& model, const HttpRequest& req, std::string_view target,
                std::string_view body, HttpResponse& res, RequestContext& ctx,
                bool loading_state = false);
  // sendLoadingState (frontdoor/loading_state.cpp): a 200 event stream that tells how the model's
  // load goes (as reasoning_content deltas) while a thread waits for it, then carries the
  // backend's own stream.
  void DispatchWithLoadingState(const ModelConfig& model, const HttpRequest& req,
                                std::string_view target, std::string_view body, HttpResponse& res,
                                bool evict_protected, std::shared_ptr<InflightRequest> inflight);
  // One line of sendLoadingState's text about `model` now ("tensors: 3.0 s, 42%, about 4.1 s
  // left (usually 7.5 s)", or why it waits and its queue position), from the Router's view.
  std::string LoadingLine(const std::string& model);
  // What the proxy is asked to send: `req` with `target` and `body` (which must outlive it).
  // With the capture limit of the configuration now.
  ProxyRequest ProxyRequestOf(const HttpRequest& req, std::string_view target,
                              std::string_view body, const std::string& route,
                              std::shared_ptr<InflightRequest> inflight) const;
  // Where a request for a local model goes once `lease` is held.
  UpstreamTarget LocalUpstream(const TimeoutsConfig& timeouts, Lease lease) const;
  // Tells on_refused of a request `res` answered without a backend, after waiting since
  // `arrived`.
  void Refused(const std::string& model, const std::string& route, const HttpRequest& req,
               const HttpResponse& res, std::string error,
               std::chrono::steady_clock::time_point arrived);
  // The client's error for a backend that failed a request: `what` and why the model stopped
  // serving (exit status and log tail), once the Router knows.
  Status DescribeBackendFailure(const std::string& model_id, const std::string& what);

  Router& router_;
  const FrontDoorEvents events_;
  const FrontDoorSettings settings_;
  mutable std::mutex config_mu_;
  std::shared_ptr<const Config> config_;  // Guarded by config_mu_
  std::string active_profile_;            // "" for none. Guarded by config_mu_
  std::vector<ExtraRoute> extra_routes_;  // set before Run()
  std::unique_ptr<PeerMonitor> peers_;
  InflightTable inflight_;  // before the proxy and the server: their requests hold entries
  std::mutex peer_flight_mu_;
  // Requests in flight to each peer's model ("<peer>/<model>"), for spillover selectors: a peer's
  // model counts as live while it has some. Guarded by peer_flight_mu_.
  std::map<std::string, int> peer_in_flight_;
  std::unique_ptr<UpstreamProxy> proxy_;
  std::unique_ptr<Http1Server> server_;
  std::atomic<bool> shutting_down_{false};
  std::atomic<size_t> round_robin_{0};  // spillover selectors' turn among equally busy targets
  int port_ = 0;
};

}  // namespace swapd
