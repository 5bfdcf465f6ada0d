// POST /models/load and POST /models/unload: llama.cpp's router API (llama-swap has no load
// route), so that its clients (the pi coding agent's llama.cpp provider) manage swapd's models.
// Body {"model": "<id or alias>"}; 200 {"success": true} at once, and GET /models shows the
// progress: loading, then loaded, or unloaded with failed and exit_code.
#include <nlohmann/json.hpp>

#include "frontdoor/error_response.h"
#include "frontdoor/front_door.h"
#include "frontdoor/model_id.h"

namespace swapd {

void FrontDoor::HandleLoad(const HttpRequest& req, HttpResponse& res, bool load) {
  const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  auto name = body.is_object() ? body.find("model") : body.end();
  if (name == body.end() || !name->is_string() || name->get<std::string>().empty()) {
    return SetErrorResponse(
        res, Status::Error(ErrorCode::kInvalidArgument, "expected {\"model\": \"<model id>\"}"));
  }
  const std::string requested = name->get<std::string>();
  auto [cfg, profile] = routing();
  const ResolvedModel resolved = Resolve(*cfg, profile, requested);
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
    router_.Load(resolved.model->id);
  } else {
    router_.BeginUnload(resolved.model->id);
  }
  res.SetBody(nlohmann::json{{"success", true}}.dump(), "application/json");
}

}  // namespace swapd
