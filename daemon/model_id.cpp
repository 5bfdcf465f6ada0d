#include "daemon/model_id.h"

namespace swapd {
namespace {

// Whether arrays and objects in `text` nest deeper than `limit`, counting brackets outside
// strings. Cheap enough to run before the parser, which would build the whole tree first.
bool NestsDeeperThan(std::string_view text, size_t limit) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

}  // namespace

Status NoModelError() {
  return Status::Error(ErrorCode::kInvalidArgument,
                       "no model in the request: set the \"model\" field of the JSON body "
                       "(or the model form field, or ?model=)");
}

Status UnknownModelError(const std::string& id) {
  return Status::Error(ErrorCode::kNotFound, "model \"" + id +
                                                 "\" is not configured; GET /v1/models lists "
                                                 "the models this server offers");
}

Result<JsonRequest> ParseJsonRequest(std::string_view body,
                                     const std::optional<std::string>& query_model) {
  JsonRequest request;
  if (body.empty()) {
    if (query_model && !query_model->empty()) {
      request.model = *query_model;
      request.document = nlohmann::json::object();
      return request;
    }
    return Status::Error(
        ErrorCode::kInvalidArgument,
        "the request body is empty: expected a JSON object with a \"model\" field");
  }
  if (NestsDeeperThan(body, kMaxJsonDepth)) {
    return Status::Error(ErrorCode::kInvalidArgument,
                         "the JSON in the request body nests arrays and objects deeper than " +
                             std::to_string(kMaxJsonDepth) + " levels");
  }
  try {
    request.document = nlohmann::json::parse(body.begin(), body.end());
  } catch (const nlohmann::json::parse_error& e) {
    return Status::Error(ErrorCode::kInvalidArgument,
                         std::string("malformed JSON in the request body: ") + e.what());
  } catch (const nlohmann::json::exception& e) {
    // out_of_range: a number too large for a double, e.g. 1e400.
    return Status::Error(ErrorCode::kInvalidArgument,
                         std::string("unreadable JSON in the request body: ") + e.what());
  }
  if (!request.document.is_object()) {
    return Status::Error(ErrorCode::kInvalidArgument, "the request body must be a JSON object");
  }
  auto it = request.document.find("model");
  if (it != request.document.end() && !it->is_null()) {
    if (!it->is_string()) {
      return Status::Error(ErrorCode::kInvalidArgument, "the \"model\" field must be a string");
    }
    request.model = it->get<std::string>();
  } else if (query_model) {
    request.model = *query_model;
  }
  if (auto stream = request.document.find("stream");
      stream != request.document.end() && !stream->is_boolean() && !stream->is_null()) {
    // A backend would read "yes" as false and answer unstreamed: say so instead.
    return Status::Error(ErrorCode::kInvalidArgument,
                         "the \"stream\" field must be true or false, got " + stream->dump());
  }
  if (request.model.empty()) return NoModelError();
  return request;
}

}  // namespace swapd
