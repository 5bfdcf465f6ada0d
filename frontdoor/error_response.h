// The one place that maps a Status to an HTTP response: status code, OpenAI-shaped JSON body
// `{"error":{"message":...,"type":...,"code":...}}`, and the headers some statuses need
// (Retry-After on 429, WWW-Authenticate on 401). Handlers never build error bodies by hand.
// Stateless; thread safe.
#pragma once

#include <string>

#include "base/status.h"
#include "http/message.h"

namespace swapd {

// The status logged and counted for a request whose client went away before its answer (nginx's
// 499); the client gets nothing.
inline constexpr int kClientClosedRequest = 499;

int HttpStatusOf(ErrorCode code);

// {"error":{"message":..., "type":..., "code":...}} for `status` (which must not be ok).
std::string ErrorJson(const Status& status);

// Sets `res` to the error response for `status`.
void SetErrorResponse(HttpResponse& res, const Status& status);

// The ErrorRenderer of the front door's server (http/message.h): a request the HTTP layer
// refused (400, 413, 431, 501) or whose handler threw (500), as an OpenAI-shaped error.
void RenderHttpError(HttpResponse& res, int status, std::string_view message);

// The SSE event that ends a stream which failed after its headers were sent.
std::string ErrorEvent(const Status& status);

}  // namespace swapd
