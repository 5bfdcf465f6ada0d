#include "frontdoor/error_response.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"

namespace swapd {
namespace {

struct ErrorShape {
  int http_status;
  const char* type;
  const char* code;
};

ErrorShape ShapeOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return {200, "", ""};
    case ErrorCode::kInvalidArgument:
      return {400, "invalid_request_error", "invalid_request"};
    case ErrorCode::kUnauthorized:
      return {401, "authentication_error", "invalid_api_key"};
    case ErrorCode::kNotFound:
      return {404, "invalid_request_error", "not_found"};
    case ErrorCode::kPayloadTooLarge:
      return {413, "invalid_request_error", "payload_too_large"};
    case ErrorCode::kTooManyRequests:
      return {429, "rate_limit_error", "concurrency_limit"};
    case ErrorCode::kInternal:
      return {500, "server_error", "internal_error"};
    case ErrorCode::kBackendFailed:
      return {502, "server_error", "backend_failed"};
    case ErrorCode::kUnavailable:
      return {503, "unavailable_error", "unavailable"};
    case ErrorCode::kTimeout:
      return {504, "timeout_error", "timeout"};
  }
  return {500, "server_error", "internal_error"};
}

}  // namespace

int HttpStatusOf(ErrorCode code) { return ShapeOf(code).http_status; }

std::string ErrorJson(const Status& status) {
  ErrorShape shape = ShapeOf(status.code());
  nlohmann::json body = {
      {"error", {{"message", status.message()}, {"type", shape.type}, {"code", shape.code}}}};
  return JsonText(body);  // a backend's log tail may hold bytes that are not UTF-8
}

void SetErrorResponse(HttpResponse& res, const Status& status) {
  res.status = HttpStatusOf(status.code());
  if (status.retry_after_seconds() > 0) {
    res.headers.Set("Retry-After", std::to_string(status.retry_after_seconds()));
  } else if (status.code() == ErrorCode::kTooManyRequests) {
    res.headers.Set("Retry-After", "1");
  }
  if (status.code() == ErrorCode::kUnauthorized) {
    res.headers.Set("WWW-Authenticate", "Bearer realm=\"swapd\"");
  }
  res.SetBody(ErrorJson(status), "application/json");
}

void RenderHttpError(HttpResponse& res, int status, std::string_view message) {
  ErrorCode code = status == 413   ? ErrorCode::kPayloadTooLarge
                   : status >= 500 ? ErrorCode::kInternal
                                   : ErrorCode::kInvalidArgument;
  res = HttpResponse();
  res.status = status;
  res.SetBody(ErrorJson(Status::Error(code, std::string(message))), "application/json");
}

std::string ErrorEvent(const Status& status) { return "data: " + ErrorJson(status) + "\n\n"; }

}  // namespace swapd
