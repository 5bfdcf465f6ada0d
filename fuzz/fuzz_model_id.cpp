// fuzz_model_id: the model a request names (frontdoor/model_id.h ParseJsonRequest). The input is
// the request body, optionally preceded by a first line `?model=VALUE` that stands for the query
// parameter (already URL-decoded, as the front server hands it over). ParseJsonRequest scans the
// body without building a document; the parsed document is the oracle: the body is accepted
// exactly when it parses to an object (not nested too deep) whose "model" is a string or null
// and whose "stream" is a boolean or null, with a model from the body or the query; the body's
// string "model" wins over the query; every error is a 400 with a message.
// swapd has no pure function for the multipart case: the form is parsed by cpp-httplib inside
// the server (FrontDoor::HandleMultipartInference reads its `model` field), so it is not here.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/json_text.h"
#include "frontdoor/model_id.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/json_depth.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swapd;
  std::string_view body(reinterpret_cast<const char*>(data), size);
  std::optional<std::string> query;
  constexpr std::string_view kQuery = "?model=";
  if (body.starts_with(kQuery)) {
    size_t eol = body.find('\n');
    std::string_view line = body.substr(0, eol);
    query = std::string(line.substr(kQuery.size()));
    body = eol == std::string_view::npos ? std::string_view() : body.substr(eol + 1);
  }

  Result<JsonRequest> r = ParseJsonRequest(body, query);

  // The oracle: what the parsed document says (for bodies the depth check lets through).
  const bool shallow = !NestsDeeperThan(body, kMaxJsonDepth);
  if (!body.empty() && shallow) {
    nlohmann::json doc = ParseJsonDocument(body);
    bool acceptable = doc.is_object();
    std::string model;
    if (acceptable) {
      auto it = doc.find("model");
      if (it != doc.end() && it->is_string()) {
        model = it->get<std::string>();
      } else if (it != doc.end() && !it->is_null()) {
        acceptable = false;
      } else if (query) {
        model = *query;
      }
      auto stream = doc.find("stream");
      if (stream != doc.end() && !stream->is_boolean() && !stream->is_null()) acceptable = false;
      if (model.empty()) acceptable = false;
    }
    FUZZ_CHECK(r.ok() == acceptable, "accepted exactly when the parsed document is acceptable");
    if (r.ok()) FUZZ_CHECK(r.value().model == model, "the model the parsed document names");
  }
  if (!r.ok()) {
    FUZZ_CHECK(r.status().code() == ErrorCode::kInvalidArgument, "a bad request is a 400");
    FUZZ_CHECK(!r.status().message().empty(), "an error says what is wrong");
    return 0;
  }
  FUZZ_CHECK(!r.value().model.empty(), "a request names a model");
  // Filters serialize the document again: that must be safe for anything that was accepted.
  nlohmann::json doc = ParseJsonDocument(body);
  FUZZ_CHECK(doc.is_object(), "an accepted body parses to an object");
  (void)JsonText(doc);
  return 0;
}
