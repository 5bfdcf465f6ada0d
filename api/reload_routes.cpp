#include "api/reload_routes.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "frontdoor/error_response.h"

namespace swapd {
namespace {

nlohmann::json ReloadOutcomeJson(const ReloadOutcome& outcome) {
  nlohmann::json diagnostics = nlohmann::json::array();
  for (const auto& d : outcome.diagnostics) diagnostics.push_back(ToJson(d));
  if (!outcome.ok) {
    nlohmann::json body = nlohmann::json::parse(ErrorJson(
        Status::Error(ErrorCode::kInvalidArgument,
                      "the new configuration has errors; the running configuration is unchanged")));
    body["error"]["diagnostics"] = std::move(diagnostics);
    return body;
  }
  return {{"status", "ok"},
          {"added", outcome.diff.added},
          {"removed", outcome.diff.removed},
          {"changed", outcome.diff.changed},
          {"unchanged", outcome.diff.unchanged},
          {"diagnostics", std::move(diagnostics)}};
}

}  // namespace

void AddReloadRoute(FrontDoor& door, std::function<ReloadOutcome()> reload) {
  door.AddRoute(
      "POST", "/api/config/reload",
      [reload = std::move(reload)](const HttpRequest&, HttpResponse& res, RequestContext& ctx) {
        if (!reload) {
          return SetErrorResponse(res, Status::Error(ErrorCode::kUnavailable,
                                                     "reloading is not available in this server"));
        }
        ctx.WillBlock();  // a reload may stop models
        ReloadOutcome outcome = reload();
        res.status = outcome.ok ? 200 : 400;
        res.SetBody(JsonText(ReloadOutcomeJson(outcome)), "application/json");
      });
}

}  // namespace swapd
