// GET /api/captures/{id}: one request's capture from the CaptureStore, as llama-swap answers it:
// {id, req_path, req_headers, req_body, resp_headers, resp_body}, the bodies in base64 (Go's
// encoding of a []byte), a part that was not kept null.
#include "api/capture_routes.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/json_text.h"
#include "frontdoor/error_response.h"
#include "store/capture_store.h"

namespace swapd {
namespace {

using nlohmann::json;

json BodyJson(const std::optional<std::string>& body) {
  return body ? json(EncodeBase64(*body)) : json(nullptr);
}

json CaptureJson(int64_t id, const RequestCapture& c) {
  return {{"id", id},
          {"req_path", c.req_path},
          {"req_headers", CapturedHeadersJson(c.req_headers)},
          {"req_body", BodyJson(c.req_body)},
          {"resp_headers", CapturedHeadersJson(c.resp_headers)},
          {"resp_body", BodyJson(c.resp_body)}};
}

}  // namespace

void AddCaptureRoutes(FrontDoor& door, const CaptureStore& captures) {
  constexpr std::string_view kPrefix = "/api/captures/";
  door.AddRoute("GET", std::string(kPrefix),
                [&captures, kPrefix](const HttpRequest& req, HttpResponse& res, RequestContext&) {
                  const std::string_view text = std::string_view(req.path).substr(kPrefix.size());
                  int64_t id = 0;
                  const auto [end, error] = std::from_chars(text.begin(), text.end(), id);
                  if (text.empty() || error != std::errc() || end != text.end()) {
                    return SetErrorResponse(
                        res, Status::Error(ErrorCode::kInvalidArgument, "invalid capture ID"));
                  }
                  std::shared_ptr<const RequestCapture> capture = captures.Find(id);
                  if (!capture) {
                    return SetErrorResponse(
                        res, Status::Error(ErrorCode::kNotFound, "capture not found"));
                  }
                  res.SetBody(JsonText(CaptureJson(id, *capture)), "application/json");
                });
}

}  // namespace swapd
