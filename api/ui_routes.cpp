#include "api/ui_routes.h"

#include <string>
#include <string_view>

#include "frontdoor/error_response.h"
#include "ui/ui_assets.h"

namespace swapd {
namespace {

std::string_view ContentType(std::string_view name) {
  auto ends_with = [name](std::string_view suffix) { return name.ends_with(suffix); };
  if (ends_with(".html")) return "text/html; charset=utf-8";
  if (ends_with(".js")) return "text/javascript; charset=utf-8";
  if (ends_with(".css")) return "text/css; charset=utf-8";
  if (ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

const UiAsset* FindAsset(std::string_view name) {
  for (const UiAsset& asset : UiAssets()) {
    if (asset.name == name) return &asset;
  }
  return nullptr;
}

void Serve(std::string_view name, HttpResponse& res) {
  const UiAsset* asset = FindAsset(name);
  if (asset == nullptr) {
    return SetErrorResponse(
        res, Status::Error(ErrorCode::kNotFound, "no dashboard file " + std::string(name)));
  }
  // The files change with the binary only; no-cache makes a browser ask again after an upgrade.
  res.headers.Set("Cache-Control", "no-cache");
  // The pages talk to this server only: nothing is fetched from elsewhere, nothing runs inline.
  res.headers.Set("Content-Security-Policy",
                  "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
  res.headers.Set("X-Content-Type-Options", "nosniff");
  res.SetBody(std::string(asset->bytes), std::string(ContentType(name)));
}

}  // namespace

void AddUiRoutes(FrontDoor& door) {
  door.AddRoute("GET", "/ui", [](const HttpRequest&, HttpResponse& res, RequestContext&) {
    res.SetRedirect("/ui/", 302);
  });
  door.AddRoute("GET", "/ui/", [](const HttpRequest& req, HttpResponse& res, RequestContext&) {
    std::string_view name = std::string_view(req.path).substr(sizeof("/ui/") - 1);
    Serve(name.empty() ? "index.html" : name, res);
  });
  door.AddRoute("GET", "/favicon.ico", [](const HttpRequest&, HttpResponse& res, RequestContext&) {
    Serve("favicon.svg", res);
  });
}

}  // namespace swapd
