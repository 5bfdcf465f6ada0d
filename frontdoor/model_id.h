// Finding the model id a client asked for: in the JSON body (`"model"`), in a form field (`model`,
// multipart or urlencoded), or in the `?model=` query parameter. Pure functions of
// the request's parts; no I/O. Thread safe.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace swapd {

// What the front door needs of a JSON request body: the model id. The body is scanned
// (frontdoor/json_scan.h), not parsed into a document, which is several times faster
// (bench/README.md); the document is built only for a model with filters (ParseJsonDocument).
struct JsonRequest {
  std::string model;
  bool stream = false;  // "stream": true
};

// Arrays and objects nested deeper than this are refused: serializing (filters) and comparing a
// JSON document recurse once per level, and a few megabytes of `[` would overflow the stack.
inline constexpr size_t kMaxJsonDepth = 512;

// Checks that `body` is a JSON object and reads its string field "model". When the body has no
// model, `query_model` (from ?model=) is used if given. Errors (kInvalidArgument) say what is
// wrong: malformed JSON (with the parser's position), a number out of range, nesting deeper than
// kMaxJsonDepth, not an object, `model` not a string, `stream` not a boolean, no model. Of
// duplicate keys the last counts, as in a parsed document.
Result<JsonRequest> ParseJsonRequest(std::string_view body,
                                     const std::optional<std::string>& query_model);

// The document of a body that ParseJsonRequest accepted (an empty body is an empty object).
nlohmann::json ParseJsonDocument(std::string_view body);

// The value of the field "model" of an application/x-www-form-urlencoded body (the first one),
// decoded; "" when it has none.
std::string UrlencodedFormModel(std::string_view body);

// `target` (a path and its query) with the value of its `model` query parameters replaced by
// `name`, percent-encoded; the same target when its query has no `model`.
std::string ReplaceQueryModel(std::string_view target, std::string_view name);

// The error for a request that names no model at all.
Status NoModelError();
// The error for a model id (or alias) the configuration does not have.
Status UnknownModelError(const std::string& id);

}  // namespace swapd
