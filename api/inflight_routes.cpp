#include "api/inflight_routes.h"

#include <nlohmann/json.hpp>

#include "frontdoor/error_response.h"

namespace swapd {

void AddInflightRoutes(FrontDoor& door) {
  door.AddRoute(
      "POST", "/api/inflight/",
      [&door](const HttpRequest& req, HttpResponse& res, RequestContext&) {
        constexpr std::string_view kPrefix = "/api/inflight/";
        constexpr std::string_view kCancel = "/cancel";
        const std::string_view rest = std::string_view(req.path).substr(kPrefix.size());
        if (rest.size() <= kCancel.size() || !rest.ends_with(kCancel)) {
          return SetErrorResponse(
              res, Status::Error(ErrorCode::kNotFound, "no route " + req.method + " " + req.path));
        }
        const std::string id(rest.substr(0, rest.size() - kCancel.size()));
        if (!door.inflight().Cancel(id)) {
          return SetErrorResponse(res, Status::Error(ErrorCode::kNotFound,
                                                     "inflight request not found: \"" + id + "\""));
        }
        res.SetBody(nlohmann::json{{"msg", "ok"}}.dump(), "application/json");
      });
}

}  // namespace swapd
