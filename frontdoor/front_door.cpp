// FrontDoor: construction, then one request from the top: Handle -> Route -> the inference
// handlers -> Dispatch (dispatch.cpp: Router, then UpstreamProxy). The llama-swap listing and
// unload routes are in list_routes.cpp.
#include "frontdoor/front_door.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "frontdoor/auth.h"
#include "frontdoor/error_response.h"
#include "frontdoor/filters.h"
#include "frontdoor/model_id.h"
#include "frontdoor/multipart.h"
#include "frontdoor/profiles.h"
#include "frontdoor/selector_choice.h"
#include "http/http1_server.h"

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

std::optional<std::string> QueryModel(const HttpRequest& req) {
  std::optional<std::string_view> model = req.Param("model");
  if (!model) return std::nullopt;
  return std::string(*model);
}

}  // namespace

FrontDoor::FrontDoor(std::shared_ptr<const Config> config, Router& router, FrontDoorEvents events,
                     FrontDoorSettings settings)
    : router_(router), events_(std::move(events)), settings_(settings), config_(std::move(config)) {
  Http1ServerSettings server_settings;
  server_settings.limits.max_body_bytes = settings_.max_body_bytes;
  server_settings.limits.max_header_fields = kMaxRequestHeaders;
  server_settings.limits.render_error = RenderHttpError;
  server_settings.idle_timeout = kIdleTimeout;
  server_ = std::make_unique<Http1Server>(
      server_settings,
      [this](const HttpRequest& req, HttpResponse& res, RequestContext& ctx) {
        Handle(req, res, ctx);
      },
      [](const HttpRequest& req, const HttpResponse& res) {
        spdlog::info("{} {} {} {}", req.remote_addr, req.method, req.path, res.status);
      });
  peers_ = std::make_unique<PeerMonitor>(PeerMonitor::Settings{settings_.peer_check_interval});
  peers_->SetPeers(config_->peers);
  proxy_ = std::make_unique<UpstreamProxy>(
      [this](const std::string& model_id, const std::string& what) {
        return DescribeBackendFailure(model_id, what);
      },
      [this](const ProxyRecord& record) {
        // What a request found out about its peer is as good as a check.
        if (!record.peer.empty()) {
          std::lock_guard lock(peer_flight_mu_);
          if (--peer_in_flight_[record.model_id] <= 0) peer_in_flight_.erase(record.model_id);
        }
        if (record.unreachable && !record.peer.empty()) {
          peers_->Unreachable(record.peer, "a request could not connect");
          peers_->CheckSoon(record.peer);
        } else if (!record.peer.empty() && record.status > 0) {
          peers_->Reached(record.peer);
        }
        if (events_.on_proxied) events_.on_proxied(record);
      });
}

FrontDoor::~FrontDoor() { Stop(); }

std::shared_ptr<const Config> FrontDoor::config() const {
  std::lock_guard lock(config_mu_);
  return config_;
}

void FrontDoor::SetConfig(std::shared_ptr<const Config> config) {
  peers_->SetPeers(config->peers);
  std::lock_guard lock(config_mu_);
  config_ = std::move(config);
  active_profile_.clear();  // as llama-swap: no profile is active after a reload
}

std::pair<std::shared_ptr<const Config>, std::string> FrontDoor::routing() const {
  std::lock_guard lock(config_mu_);
  return {config_, active_profile_};
}

void FrontDoor::AddRoute(std::string method, std::string path, Handler handler) {
  extra_routes_.push_back({std::move(method), std::move(path), std::move(handler)});
}

Status FrontDoor::Bind(const std::string& host, int port) {
  Status bound = server_->Bind(host, port);
  port_ = server_->port();
  return bound;
}

void FrontDoor::Run() { server_->Run(); }

void FrontDoor::Stop() {
  if (server_) server_->Stop();
}

void FrontDoor::Handle(const HttpRequest& req, HttpResponse& res, RequestContext& ctx) {
  if (req.path == "/health") {
    Route(req, res, ctx);
  } else if (shutting_down_) {
    SetErrorResponse(res, Status::Error(ErrorCode::kUnavailable, "swapd is shutting down"));
  } else if (!IsAuthorized(config()->api_keys, req.Header("Authorization"),
                           req.Header("x-api-key"))) {
    SetErrorResponse(res, Status::Error(ErrorCode::kUnauthorized,
                                        "missing or invalid API key: send it as "
                                        "'Authorization: Bearer KEY' or 'x-api-key: KEY'"));
    // A browser asks for a password only when challenged with Basic: the dashboard's key is
    // typed there (any user name), and the browser then sends it with the pages' API calls.
    if (req.path == "/" || req.path == "/ui" || req.path.starts_with("/ui/")) {
      res.headers.Set("WWW-Authenticate", "Basic realm=\"swapd\"");
    }
  } else {
    Route(req, res, ctx);
  }
}

void FrontDoor::Route(const HttpRequest& req, HttpResponse& res, RequestContext& ctx) {
  const std::string& path = req.path;
  // What follows `prefix` in the path, when there is something.
  auto tail = [&path](std::string_view prefix) -> std::optional<std::string> {
    if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) {
      return std::nullopt;
    }
    return path.substr(prefix.size());
  };
  if (auto rest = tail("/upstream/")) return HandleUpstream(req, res, ctx, *rest);
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (get) {
    if (path == "/health") return res.SetBody("OK", "text/plain");
    // As llama-swap: the dashboard (api/ui_routes.cpp). Here, as a route "/" would be a
    // prefix of every path.
    if (path == "/") return res.SetRedirect("/ui/", 302);
    if (path == "/v1/models" || path == "/models") return HandleListModels(res);
    if (path == "/running") return HandleRunning(res);
    if (path == "/unload") return HandleUnload(res, "");
    if (path == "/api/profiles") return HandleListProfiles(res);
    if (path == "/api/peers") return HandleListPeers(res);
  } else if (req.method == "PUT") {
    if (path == "/api/profiles/active") return HandleSetProfile(req, res);
  } else if (req.method == "POST") {
    for (const char* route : kJsonRoutes) {
      if (path == route) return HandleJsonInference(req, res, ctx);
    }
    if (path == "/v1/audio/transcriptions") return HandleMultipartInference(req, res, ctx);
    if (path == "/models/load") return HandleLoad(req, res, true);
    if (path == "/models/unload") return HandleLoad(req, res, false);
    if (path == "/api/models/unload") return HandleUnload(res, "");
    if (auto model = tail("/api/models/unload/")) return HandleUnload(res, *model);
    if (auto rest = tail("/api/inflight/")) {
      constexpr std::string_view kCancel = "/cancel";
      if (rest->size() > kCancel.size() && rest->ends_with(kCancel)) {
        return HandleCancel(rest->substr(0, rest->size() - kCancel.size()), res);
      }
    }
  }
  for (const ExtraRoute& route : extra_routes_) {
    const bool method = route.method == req.method || (route.method == "GET" && get);
    const bool prefix = !route.path.empty() && route.path.back() == '/';
    if (method && (path == route.path || (prefix && tail(route.path)))) {
      return route.handler(req, res, ctx);
    }
  }
  SetErrorResponse(res, Status::Error(ErrorCode::kNotFound, "no route " + req.method + " " + path));
}

void FrontDoor::HandleJsonInference(const HttpRequest& req, HttpResponse& res,
                                    RequestContext& ctx) {
  Result<JsonRequest> parsed = ParseJsonRequest(req.body, QueryModel(req));
  if (!parsed.ok()) return SetErrorResponse(res, parsed.status());
  auto [cfg, profile] = routing();
  ResolvedModel resolved = Resolve(*cfg, profile, parsed.value().model);
  if (resolved.peer) {
    nlohmann::json document = ParseJsonDocument(req.body);
    std::optional<std::string> filtered =
        ApplyPeerFilters(cfg->peers.at(resolved.peer->peer), resolved.peer->model, document);
    return DispatchToPeer(*cfg, *resolved.peer, req, req.target, filtered ? *filtered : req.body,
                          res, ctx);
  }
  const ModelConfig* model = resolved.model;
  if (!model) return SetErrorResponse(res, UnknownModelError(parsed.value().model));
  std::optional<std::string> filtered;
  if (HasFilters(*model)) {  // only then is the body parsed into a document
    nlohmann::json document = ParseJsonDocument(req.body);
    filtered = ApplyFilters(*model, resolved.id, document);
  }
  const bool loading_state = parsed.value().stream && req.path == "/v1/chat/completions" &&
                             model->send_loading_state.value_or(cfg->send_loading_state);
  Dispatch(*model, req, req.target, filtered ? *filtered : req.body, res, ctx, loading_state);
}

void FrontDoor::HandleMultipartInference(const HttpRequest& req, HttpResponse& res,
                                         RequestContext& ctx) {
  // The body is forwarded as it came, except for the model field's value under useModelName.
  std::optional<std::string> boundary = MultipartBoundary(req.Header("Content-Type"));
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
  auto [cfg, profile] = routing();
  const ResolvedModel resolved = Resolve(*cfg, profile, model_id);
  const ModelConfig* model = resolved.model;
  if (!model && !resolved.peer) return SetErrorResponse(res, UnknownModelError(model_id));
  // A peer's model goes by the peer's name for it.
  const std::string& name = model ? model->use_model_name : resolved.peer->model;
  std::string body;
  if (form.field && !name.empty()) {
    body = req.body;
    body.replace(form.field->offset, form.field->size, name);
  }
  const std::string_view sent = body.empty() ? std::string_view(req.body) : body;
  if (resolved.peer) return DispatchToPeer(*cfg, *resolved.peer, req, req.target, sent, res, ctx);
  Dispatch(*model, req, req.target, sent, res, ctx);
}

ResolvedModel FrontDoor::Resolve(const Config& config, const std::string& profile,
                                 const std::string& requested) {
  ResolvedModel r = ResolveModel(config, profile, requested);
  if (r.selector == nullptr) return r;
  std::map<std::string, TargetLoad> by_model;
  for (const ModelSnapshot& m : router_.Snapshot()) {
    by_model[m.id] = TargetLoad{m.backend.state, m.in_flight + m.queued};
  }
  std::vector<TargetLoad> loads;
  for (const std::string& target : r.selector->targets) {
    if (const ModelConfig* model = config.FindModel(target)) {
      loads.push_back(by_model[model->id]);
    } else if (const PeerModelRef* peer = config.FindPeerModel(target)) {
      std::lock_guard lock(peer_flight_mu_);
      auto it = peer_in_flight_.find(peer->peer + "/" + peer->model);
      loads.push_back(
          TargetLoad{BackendState::kStopped, it != peer_in_flight_.end() ? it->second : 0});
    } else {
      loads.push_back(TargetLoad{});
    }
  }
  const std::string& target = r.selector->targets[ChooseTarget(*r.selector, loads, round_robin_)];
  if (const ModelConfig* model = config.FindModel(target)) return {model, target};
  return {nullptr, target, nullptr, config.FindPeerModel(target)};
}

void FrontDoor::HandleUpstream(const HttpRequest& req, HttpResponse& res, RequestContext& ctx,
                               const std::string& rest) {
  // /upstream/{model}/{path...}: model ids may contain '/', so the longest prefix that names a
  // model wins.
  auto [cfg, profile] = routing();
  ResolvedModel resolved;
  std::string path;
  for (size_t cut = rest.size();; cut = rest.rfind('/', cut - 1)) {
    if (cut == std::string::npos || cut == 0) break;
    resolved = ResolveModel(*cfg, profile, rest.substr(0, cut));
    if (resolved.model || resolved.peer) {
      path = rest.substr(cut);
      break;
    }
  }
  const ModelConfig* model = resolved.model;
  if (!model && !resolved.peer)
    return SetErrorResponse(res, UnknownModelError(rest.substr(0, rest.find('/'))));
  if (path.empty()) {
    // Relative links of a backend's web page need the trailing slash.
    res.SetRedirect(req.path + "/", 301);
    return;
  }
  std::string target = path;
  size_t query = req.target.find('?');
  if (query != std::string::npos) target += req.target.substr(query);
  if (resolved.peer) return DispatchToPeer(*cfg, *resolved.peer, req, target, req.body, res, ctx);
  Dispatch(*model, req, target, req.body, res, ctx);
}

}  // namespace swapd
