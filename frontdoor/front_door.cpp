// FrontDoor: construction, then one request from the top: Handle -> Route -> the inference
// handlers (model id, filters, Routing::Resolve) -> Dispatcher::Dispatch (dispatcher.cpp).
#include "frontdoor/front_door.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "frontdoor/auth.h"
#include "frontdoor/error_response.h"
#include "frontdoor/filters.h"
#include "frontdoor/inference_routes.h"
#include "frontdoor/model_id.h"
#include "frontdoor/multipart.h"
#include "http/http1_server.h"

namespace swapd {
namespace {

// More request headers than any client sends; beyond it 431.
constexpr size_t kMaxRequestHeaders = 256;
// An idle keep-alive connection is closed after this long (it holds no thread meanwhile).
constexpr auto kIdleTimeout = std::chrono::seconds(60);

std::optional<std::string> QueryModel(const HttpRequest& req) {
  std::optional<std::string_view> model = req.Param("model");
  if (!model) return std::nullopt;
  return std::string(*model);
}

// Whether a Content-Type (any case, with parameters) contains `type`.
bool ContentTypeHas(std::string_view content_type, std::string_view type) {
  return AsciiLower(content_type).find(type) != std::string::npos;
}

// Where a resolved model (a local one or a peer's) is dispatched.
Destination DestinationOf(const Routing::Now& now, const ResolvedModel& resolved) {
  if (resolved.model) return Destination::Local(now.config, *resolved.model);
  return Destination::Peer(now.config, *resolved.peer);
}

// Left out of the request log, as llama-swap leaves them out (its requestLogPathSkips): pages poll
// them, and their lines would drown the useful ones.
bool IsPolledPath(std::string_view path) {
  for (std::string_view prefix : {"/wol-health", "/api/performance", "/metrics"}) {
    if (path.starts_with(prefix)) return true;
  }
  return false;
}

}  // namespace

FrontDoor::FrontDoor(const LiveConfig& live, Router& router, FrontDoorEvents events,
                     FrontDoorSettings settings)
    : routing_(live, router) {
  Http1ServerSettings server_settings;
  server_settings.limits.max_body_bytes = settings.max_body_bytes;
  server_settings.limits.max_header_fields = kMaxRequestHeaders;
  server_settings.limits.render_error = RenderHttpError;
  server_settings.idle_timeout = kIdleTimeout;
  server_ = std::make_unique<Http1Server>(
      server_settings,
      [this](const HttpRequest& req, HttpResponse& res, RequestContext& ctx) {
        Handle(req, res, ctx);
      },
      [](const HttpRequest& req, const HttpResponse& res) {
        if (IsPolledPath(req.path)) return;
        spdlog::info("{} {} {} {}", req.remote_addr, req.method, req.path, res.status);
      });
  peers_ = std::make_unique<PeerMonitor>(PeerMonitor::Settings{settings.peer_check_interval});
  peers_->SetPeers(live.Current()->peers);
  dispatcher_ = std::make_unique<Dispatcher>(router, routing_, *peers_, inflight_,
                                             std::move(events), settings.dispatch);
}

FrontDoor::~FrontDoor() { Stop(); }

void FrontDoor::ConfigChanged(const Config& next) { peers_->SetPeers(next.peers); }

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
  } else if (!IsAuthorized(routing_.config()->api_keys, req.Header("Authorization"),
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
  if (const InferenceRoute* route = FindInferenceRoute(req.method, path)) {
    switch (route->model_in) {
      case InferenceRoute::ModelIn::kJsonBody:
        return HandleJsonInference(req, res, ctx);
      case InferenceRoute::ModelIn::kForm:
        return HandleFormInference(req, res, ctx);
      case InferenceRoute::ModelIn::kQuery:
        return HandleNamedInference(req, res, ctx, QueryModel(req).value_or(""));
    }
  }
  constexpr std::string_view kUpstream = "/upstream/";
  if (path.size() > kUpstream.size() && path.starts_with(kUpstream)) {
    return HandleUpstream(req, res, ctx, path.substr(kUpstream.size()));
  }
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (get && path == "/health") return res.SetBody("OK", "text/plain");
  // HEAD / is how Ollama's clients check that a server is up (ollama_routes.h): 200, as Ollama
  // answers. GET /, as llama-swap: the dashboard (api/ui_routes.cpp). Here, as a route "/" would
  // be a prefix of every path.
  if (req.method == "HEAD" && path == "/") return res.SetBody("Ollama is running", "text/plain");
  if (get && path == "/") return res.SetRedirect("/ui/", 302);
  for (const ExtraRoute& route : extra_routes_) {
    const bool method = route.method == req.method || (route.method == "GET" && get);
    const bool prefix = !route.path.empty() && route.path.back() == '/';
    if (method && (path == route.path ||
                   (prefix && path.size() > route.path.size() && path.starts_with(route.path)))) {
      return route.handler(req, res, ctx);
    }
  }
  SetErrorResponse(res, Status::Error(ErrorCode::kNotFound, "no route " + req.method + " " + path));
}

void FrontDoor::HandleJsonInference(const HttpRequest& req, HttpResponse& res,
                                    RequestContext& ctx) {
  Result<JsonRequest> parsed = ParseJsonRequest(req.body, QueryModel(req));
  const std::string_view type = req.Header("Content-Type");
  if (!parsed.ok() && !req.body.empty() && !ContentTypeHas(type, "json")) {
    // llama-swap's rule for a body that is not JSON (a form, an image): the model is in its form
    // field, else in ?model=.
    if (ContentTypeHas(type, "multipart/form-data")) return HandleFormInference(req, res, ctx);
    std::string model;
    if (ContentTypeHas(type, "application/x-www-form-urlencoded")) {
      model = UrlencodedFormModel(req.body);
    }
    if (model.empty()) model = QueryModel(req).value_or("");
    if (!model.empty()) return HandleNamedInference(req, res, ctx, model);
  }
  if (!parsed.ok()) return SetErrorResponse(res, parsed.status());
  std::optional<Resolution> where = Resolve(parsed.value().model);
  if (!where) return SetErrorResponse(res, UnknownModelError(parsed.value().model));
  const bool loading_state =
      parsed.value().stream && req.path == "/v1/chat/completions" && where->to.model != nullptr &&
      where->to.model->send_loading_state.value_or(where->to.config->send_loading_state);
  DispatchJson(*where, req, ForwardedTarget(req.target), req.body, res, ctx, loading_state);
}

std::optional<FrontDoor::Resolution> FrontDoor::Resolve(const std::string& requested) {
  const Routing::Now now = routing_.Current();
  const ResolvedModel resolved = routing_.Resolve(now, requested);
  if (!resolved.model && !resolved.peer) return std::nullopt;
  return Resolution{DestinationOf(now, resolved), resolved.id};
}

void FrontDoor::DispatchJson(const Resolution& where, const HttpRequest& req,
                             std::string_view target, std::string_view body, HttpResponse& res,
                             RequestContext& ctx, bool loading_state) {
  const Destination& to = where.to;
  std::optional<std::string> filtered;
  if (to.peer) {
    nlohmann::json document = ParseJsonDocument(body);
    filtered = ApplyPeerFilters(*to.peer, to.peer_model, document);
  } else if (HasFilters(*to.model)) {  // only then is the body parsed into a document
    nlohmann::json document = ParseJsonDocument(body);
    filtered = ApplyFilters(*to.model, where.id, document);
  }
  dispatcher_->Dispatch(to, req, target, filtered ? std::string_view(*filtered) : body, res, ctx,
                        loading_state && to.model != nullptr);
}

void FrontDoor::HandleFormInference(const HttpRequest& req, HttpResponse& res,
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
  const Routing::Now now = routing_.Current();
  const ResolvedModel resolved = routing_.Resolve(now, model_id);
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
  dispatcher_->Dispatch(DestinationOf(now, resolved), req, ForwardedTarget(req.target), sent, res,
                        ctx);
}

void FrontDoor::HandleNamedInference(const HttpRequest& req, HttpResponse& res, RequestContext& ctx,
                                     const std::string& model_id) {
  if (model_id.empty()) return SetErrorResponse(res, NoModelError());
  const Routing::Now now = routing_.Current();
  const ResolvedModel resolved = routing_.Resolve(now, model_id);
  if (!resolved.model && !resolved.peer) return SetErrorResponse(res, UnknownModelError(model_id));
  // The body goes as it came; ?model= says the backend's (or the peer's) name for the model.
  const std::string& name = resolved.model ? resolved.model->use_model_name : resolved.peer->model;
  const std::string_view forwarded = ForwardedTarget(req.target);
  const std::string target =
      name.empty() ? std::string(forwarded) : ReplaceQueryModel(forwarded, name);
  dispatcher_->Dispatch(DestinationOf(now, resolved), req, target, req.body, res, ctx);
}

void FrontDoor::HandleUpstream(const HttpRequest& req, HttpResponse& res, RequestContext& ctx,
                               const std::string& rest) {
  // /upstream/{model}/{path...}: model ids may contain '/', so the longest prefix that names a
  // model wins. Selectors are not reachable here.
  const Routing::Now now = routing_.Current();
  ResolvedModel resolved;
  std::string path;
  for (size_t cut = rest.size();; cut = rest.rfind('/', cut - 1)) {
    if (cut == std::string::npos || cut == 0) break;
    resolved = ResolveModel(*now.config, now.profile, rest.substr(0, cut));
    if (resolved.model || resolved.peer) {
      path = rest.substr(cut);
      break;
    }
  }
  if (!resolved.model && !resolved.peer) {
    return SetErrorResponse(res, UnknownModelError(rest.substr(0, rest.find('/'))));
  }
  if (path.empty()) {
    // Relative links of a backend's web page need the trailing slash.
    res.SetRedirect(req.path + "/", 301);
    return;
  }
  std::string target = path;
  size_t query = req.target.find('?');
  if (query != std::string::npos) target += req.target.substr(query);
  dispatcher_->Dispatch(DestinationOf(now, resolved), req, target, req.body, res, ctx);
}

}  // namespace swapd
