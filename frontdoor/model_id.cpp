#include "frontdoor/model_id.h"

#include "frontdoor/json_scan.h"
#include "http/http1_request.h"

namespace swapd {

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

namespace {

// Reads the top-level "model" and "stream" of a request body as the scan goes by. Of duplicate
// keys the last counts, as it would in a parsed document.
class RequestFields : public JsonHandler {
 public:
  bool top_is_object = false;
  std::optional<JsonKind> model;  // absent: no such key
  std::string_view model_token;
  std::optional<JsonKind> stream;
  std::string_view stream_token;  // empty for an object or an array

  void Value(size_t depth, JsonKind kind, std::string_view token) override {
    if (depth == 0) top_is_object = kind == JsonKind::kObject;
    if (depth != 1) return;
    if (field_ == Field::kModel) {
      model = kind;
      model_token = token;
    } else if (field_ == Field::kStream) {
      stream = kind;
      stream_token = token;
    }
    field_ = Field::kOther;
  }
  void Key(size_t depth, std::string_view key) override {
    if (depth == 1) {
      field_ = key == "model" ? Field::kModel : key == "stream" ? Field::kStream : Field::kOther;
    }
  }

 private:
  enum class Field { kOther, kModel, kStream };
  Field field_ = Field::kOther;  // the top-level key whose value comes next
};

std::string Describe(JsonKind kind, std::string_view token) {
  if (kind == JsonKind::kObject) return "an object";
  if (kind == JsonKind::kArray) return "an array";
  return std::string(token);
}

}  // namespace

Result<JsonRequest> ParseJsonRequest(std::string_view body,
                                     const std::optional<std::string>& query_model) {
  JsonRequest request;
  if (body.empty()) {
    if (query_model && !query_model->empty()) {
      request.model = *query_model;
      return request;
    }
    return Status::Error(
        ErrorCode::kInvalidArgument,
        "the request body is empty: expected a JSON object with a \"model\" field");
  }
  RequestFields fields;
  if (auto error = ScanJson(body, fields, kMaxJsonDepth)) {
    switch (error->kind) {
      case JsonScanError::Kind::kTooDeep:
        return Status::Error(ErrorCode::kInvalidArgument,
                             "the JSON in the request body nests arrays and objects deeper than " +
                                 std::to_string(kMaxJsonDepth) + " levels");
      case JsonScanError::Kind::kNumberOverflow:
        return Status::Error(ErrorCode::kInvalidArgument,
                             "unreadable JSON in the request body: " + error->message);
      case JsonScanError::Kind::kMalformed:
        break;
    }
    return Status::Error(ErrorCode::kInvalidArgument,
                         "malformed JSON in the request body " + error->message);
  }
  if (!fields.top_is_object) {
    return Status::Error(ErrorCode::kInvalidArgument, "the request body must be a JSON object");
  }
  if (fields.model == JsonKind::kString) {
    request.model = DecodeJsonString(fields.model_token);
  } else if (fields.model && fields.model != JsonKind::kNull) {
    return Status::Error(ErrorCode::kInvalidArgument, "the \"model\" field must be a string");
  } else if (query_model) {
    request.model = *query_model;
  }
  if (fields.stream && fields.stream != JsonKind::kBoolean && fields.stream != JsonKind::kNull) {
    // A backend would read "yes" as false and answer unstreamed: say so instead.
    return Status::Error(ErrorCode::kInvalidArgument,
                         "the \"stream\" field must be true or false, got " +
                             Describe(*fields.stream, fields.stream_token));
  }
  if (request.model.empty()) return NoModelError();
  request.stream = fields.stream == JsonKind::kBoolean && fields.stream_token == "true";
  return request;
}

namespace {

// Calls `each(name, value)` for the `name=value` pairs of a query or urlencoded body, undecoded;
// stops when it returns false.
template <typename Each>
void ForEachPair(std::string_view text, Each each) {
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('&', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view pair = text.substr(begin, end - begin);
    const size_t eq = pair.find('=');
    if (!pair.empty() &&
        !each(pair.substr(0, eq),
              eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1))) {
      return;
    }
    begin = end + 1;
  }
}

std::string PercentEncodeModel(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

}  // namespace

std::string UrlencodedFormModel(std::string_view body) {
  std::string model;
  ForEachPair(body, [&model](std::string_view name, std::string_view value) {
    if (PercentDecode(name, true) != "model") return true;
    model = PercentDecode(value, true);
    return false;
  });
  return model;
}

std::string ReplaceQueryModel(std::string_view target, std::string_view name) {
  const size_t query = target.find('?');
  if (query == std::string_view::npos) return std::string(target);
  std::string out(target.substr(0, query + 1));
  bool first = true;
  bool replaced = false;
  ForEachPair(target.substr(query + 1), [&](std::string_view key, std::string_view value) {
    if (!first) out += '&';
    first = false;
    if (PercentDecode(key, true) == "model") {
      out.append(key).append("=").append(PercentEncodeModel(name));
      replaced = true;
    } else {
      out.append(key);
      if (value.data() != nullptr) out.append("=").append(value);
    }
    return true;
  });
  return replaced ? out : std::string(target);
}

nlohmann::json ParseJsonDocument(std::string_view body) {
  if (body.empty()) return nlohmann::json::object();
  return nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
}

}  // namespace swapd
