#include "api/load_routes.h"

#include <nlohmann/json.hpp>

#include "frontdoor/error_response.h"
#include "frontdoor/model_id.h"

namespace swapd {
namespace {

// Stops `model_name` (an id or alias), or every model when it is empty, and waits for it. As
// llama-swap answers: POST /api/models/unload {"msg":"ok"} (`json`), GET /unload and
// POST /api/models/unload/<model> text "OK".
void Unload(FrontDoor& door, Router& router, const std::string& model_name, HttpResponse& res,
            RequestContext& ctx, bool json = false) {
  std::string model_id;  // "": all models
  if (!model_name.empty()) {
    const ModelConfig* model = door.routing().config()->FindModel(model_name);
    if (!model) return SetErrorResponse(res, UnknownModelError(model_name));
    model_id = model->id;
  }
  ctx.WillBlock();
  router.Unload(model_id);
  if (json) return res.SetBody(R"({"msg":"ok"})", "application/json");
  res.SetBody("OK", "text/plain");
}

// POST /models/load (`load`) and POST /models/unload, as llama.cpp's router answers them.
void LoadOrUnload(FrontDoor& door, Router& router, const HttpRequest& req, HttpResponse& res,
                  bool load) {
  const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  auto name = body.is_object() ? body.find("model") : body.end();
  if (name == body.end() || !name->is_string() || name->get<std::string>().empty()) {
    return SetErrorResponse(
        res, Status::Error(ErrorCode::kInvalidArgument, "expected {\"model\": \"<model id>\"}"));
  }
  const std::string requested = name->get<std::string>();
  const ResolvedModel resolved = door.routing().Resolve(door.routing().Current(), requested);
  if (resolved.peer != nullptr) {
    return SetErrorResponse(
        res, Status::Error(ErrorCode::kInvalidArgument,
                           "model \"" + requested + "\" runs on peer \"" + resolved.peer->peer +
                               "\": it loads and unloads its models itself"));
  }
  if (resolved.selector != nullptr) {
    return SetErrorResponse(
        res, Status::Error(ErrorCode::kInvalidArgument,
                           "\"" + requested +
                               "\" is a selector: it picks a model per request; name the model"));
  }
  if (resolved.model == nullptr) return SetErrorResponse(res, UnknownModelError(requested));
  if (load) {
    router.Load(resolved.model->id);
  } else {
    router.BeginUnload(resolved.model->id);
  }
  res.SetBody(nlohmann::json{{"success", true}}.dump(), "application/json");
}

}  // namespace

void AddLoadRoutes(FrontDoor& door, Router& router) {
  door.AddRoute("GET", "/unload",
                [&door, &router](const HttpRequest&, HttpResponse& res, RequestContext& ctx) {
                  Unload(door, router, "", res, ctx);
                });
  door.AddRoute("POST", "/api/models/unload",
                [&door, &router](const HttpRequest&, HttpResponse& res, RequestContext& ctx) {
                  Unload(door, router, "", res, ctx, /*json=*/true);
                });
  door.AddRoute("POST", "/api/models/unload/",
                [&door, &router](const HttpRequest& req, HttpResponse& res, RequestContext& ctx) {
                  constexpr std::string_view kPrefix = "/api/models/unload/";
                  Unload(door, router, req.path.substr(kPrefix.size()), res, ctx);
                });
  door.AddRoute("POST", "/models/load",
                [&door, &router](const HttpRequest& req, HttpResponse& res, RequestContext&) {
                  LoadOrUnload(door, router, req, res, true);
                });
  door.AddRoute("POST", "/models/unload",
                [&door, &router](const HttpRequest& req, HttpResponse& res, RequestContext&) {
                  LoadOrUnload(door, router, req, res, false);
                });
}

}  // namespace swapd
