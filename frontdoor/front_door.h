// FrontDoor: swapd's endpoint. It owns the HTTP server (http/) and routes each request: an
// inference route (inference_routes.h) finds the model the request names (JSON body, multipart
// form field or ?model=; /upstream/{model}/... by its path), resolves it (Routing: ids, the
// active profile, selectors, aliases, peers) and hands it to the Dispatcher, which acquires the
// model, forwards the request and records it. /health and / are answered here; every other route
// (the control plane of api/) is added with AddRoute.
// A chat request, top-down: Handle (shutdown, API key) -> Route -> HandleJsonInference (model id,
// filters) -> Dispatcher::Dispatch (dispatcher.h) -> UpstreamProxy::Forward (upstream_proxy.h).
// Thread safe: handlers run on the server's threads; Stop() may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/router.h"
#include "base/status.h"
#include "config/live_config.h"
#include "frontdoor/dispatcher.h"
#include "frontdoor/inflight_table.h"
#include "frontdoor/peer_monitor.h"
#include "frontdoor/routing.h"
#include "http/message.h"
#include "http/request_context.h"

namespace swapd {

class Http1Server;

struct FrontDoorSettings {
  size_t max_body_bytes = 256u << 20;  // larger request bodies get 413
  DispatchSettings dispatch;
  // How often a peer that answers is checked (--peer-check-interval); a down one backs off.
  std::chrono::milliseconds peer_check_interval{std::chrono::seconds(5)};
};

class FrontDoor {
 public:
  using Handler = std::function<void(const HttpRequest&, HttpResponse&, RequestContext&)>;

  // `live` and `router` are not owned and must outlive the FrontDoor.
  FrontDoor(const LiveConfig& live, Router& router, FrontDoorEvents events = {},
            FrontDoorSettings settings = {});
  ~FrontDoor();

  // A reload took `next` into service (a LiveConfig subscriber): the peers it names are watched.
  void ConfigChanged(const Config& next);

  // Adds a route answered by `handler`, after the checks every route shares (shutdown, API
  // keys). `path` is matched whole, or as a prefix when it ends with '/'; "GET" matches HEAD
  // too. Call before Run().
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

  // Where a request naming `requested` goes now, as the OpenAI routes resolve it (Routing: ids,
  // the active profile, selectors, aliases, peers); nullopt when nothing answers to it. For the
  // API dialects translated at the edge (frontdoor/ollama_routes.h).
  struct Resolution {
    Destination to;
    std::string id;  // the id the request names after a profile's pin (setParamsByID)
  };
  std::optional<Resolution> Resolve(const std::string& requested);
  // Sends the JSON `body` (an OpenAI request) to `target` of `where` as the OpenAI routes do: the
  // model's or the peer's filters, then Dispatcher::Dispatch (acquire, forward, retry, record).
  // `body` must outlive the call; `res` gets the backend's answer or an OpenAI-shaped error.
  void DispatchJson(const Resolution& where, const HttpRequest& req, std::string_view target,
                    std::string_view body, HttpResponse& res, RequestContext& ctx,
                    bool loading_state = false);

  // What model names mean now: the live configuration and the active profile.
  Routing& routing() { return routing_; }
  const Routing& routing() const { return routing_; }
  // The inference requests in flight (/api/events `inflight`, POST /api/inflight/{id}/cancel).
  InflightTable& inflight() { return inflight_; }
  // What is known of each peer's health (GET /api/peers).
  const PeerMonitor& peers() const { return *peers_; }

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
  void HandleFormInference(const HttpRequest& req, HttpResponse& res, RequestContext& ctx);
  // A request whose model is `model_id` (from ?model= or an urlencoded form), its body forwarded
  // as it came: the GET routes, and a body that is not JSON. No model: 400.
  void HandleNamedInference(const HttpRequest& req, HttpResponse& res, RequestContext& ctx,
                            const std::string& model_id);
  void HandleUpstream(const HttpRequest& req, HttpResponse& res, RequestContext& ctx,
                      const std::string& rest);

  Routing routing_;
  std::vector<ExtraRoute> extra_routes_;  // set before Run()
  std::unique_ptr<PeerMonitor> peers_;
  InflightTable inflight_;  // before the dispatcher and the server: their requests hold entries
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<Http1Server> server_;
  std::atomic<bool> shutting_down_{false};
  int port_ = 0;
};

}  // namespace swapd
