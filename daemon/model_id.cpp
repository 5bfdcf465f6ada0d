#include "daemon/model_id.h"

namespace swapd {

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

// A SAX handler that reads the top-level "model" and "stream" of a request body and builds
// nothing: the last of duplicate keys counts, as it would in a parsed document.
class RequestSax {
 public:
  enum class Kind { kAbsent, kNull, kString, kBoolean, kOther };
  bool top_is_object = false;
  Kind model = Kind::kAbsent;
  std::string model_value;
  Kind stream = Kind::kAbsent;
  std::string stream_text;  // how a bad "stream" value reads, for the error
  std::string error;        // the parser's, when it failed

  bool null() { return Value(Kind::kNull, "null"); }
  bool boolean(bool value) { return Value(Kind::kBoolean, value ? "true" : "false"); }
  bool number_integer(int64_t value) { return Value(Kind::kOther, std::to_string(value)); }
  bool number_unsigned(uint64_t value) { return Value(Kind::kOther, std::to_string(value)); }
  bool number_float(double, const std::string& text) { return Value(Kind::kOther, text); }
  bool string(std::string& value) {
    if (depth_ == 1 && field_ == Field::kModel) model_value = value;
    return Value(Kind::kString, depth_ == 1 && field_ == Field::kStream
                                    ? nlohmann::json(value).dump(
                                          -1, ' ', false, nlohmann::json::error_handler_t::replace)
                                    : std::string());
  }
  bool binary(nlohmann::json::binary_t&) { return Value(Kind::kOther, "binary"); }
  bool start_object(size_t) {
    if (depth_ == 0) top_is_object = true;
    Value(Kind::kOther, "an object");
    ++depth_;
    return true;
  }
  bool start_array(size_t) {
    Value(Kind::kOther, "an array");
    ++depth_;
    return true;
  }
  bool end_object() {
    --depth_;
    return true;
  }
  bool end_array() {
    --depth_;
    return true;
  }
  bool key(std::string& key) {
    if (depth_ == 1) {
      field_ = key == "model" ? Field::kModel : key == "stream" ? Field::kStream : Field::kOther;
    }
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception& e) {
    error = e.what();
    return false;
  }

 private:
  enum class Field { kOther, kModel, kStream };

  // A value begins at the current depth: one directly in the top-level object belongs to the
  // last key read there.
  bool Value(Kind kind, std::string text) {
    if (depth_ != 1) return true;
    if (field_ == Field::kModel) model = kind;
    if (field_ == Field::kStream) {
      stream = kind;
      stream_text = std::move(text);
    }
    field_ = Field::kOther;
    return true;
  }

  size_t depth_ = 0;
  Field field_ = Field::kOther;
};

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
  if (NestsDeeperThan(body, kMaxJsonDepth)) {
    return Status::Error(ErrorCode::kInvalidArgument,
                         "the JSON in the request body nests arrays and objects deeper than " +
                             std::to_string(kMaxJsonDepth) + " levels");
  }
  RequestSax sax;
  if (!nlohmann::json::sax_parse(body.begin(), body.end(), &sax)) {
    // parse_error (malformed) or out_of_range (a number too large for a double, e.g. 1e400).
    const bool malformed = sax.error.find("parse_error") != std::string::npos;
    return Status::Error(ErrorCode::kInvalidArgument,
                         std::string(malformed ? "malformed JSON in the request body: "
                                               : "unreadable JSON in the request body: ") +
                             sax.error);
  }
  if (!sax.top_is_object) {
    return Status::Error(ErrorCode::kInvalidArgument, "the request body must be a JSON object");
  }
  if (sax.model == RequestSax::Kind::kString) {
    request.model = std::move(sax.model_value);
  } else if (sax.model != RequestSax::Kind::kAbsent && sax.model != RequestSax::Kind::kNull) {
    return Status::Error(ErrorCode::kInvalidArgument, "the \"model\" field must be a string");
  } else if (query_model) {
    request.model = *query_model;
  }
  if (sax.stream != RequestSax::Kind::kAbsent && sax.stream != RequestSax::Kind::kBoolean &&
      sax.stream != RequestSax::Kind::kNull) {
    // A backend would read "yes" as false and answer unstreamed: say so instead.
    return Status::Error(ErrorCode::kInvalidArgument,
                         "the \"stream\" field must be true or false, got " + sax.stream_text);
  }
  if (request.model.empty()) return NoModelError();
  return request;
}

nlohmann::json ParseJsonDocument(std::string_view body) {
  if (body.empty()) return nlohmann::json::object();
  return nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
}

}  // namespace swapd
