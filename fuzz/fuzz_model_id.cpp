// fuzz_model_id: the model a request names (daemon/model_id.h ParseJsonRequest). The input is the
// request body, optionally preceded by a first line `?model=VALUE` that stands for the query
// parameter (already URL-decoded, as cpp-httplib hands it over). Checked invariants: success
// means a non-empty model and an object document; the body's string "model" wins over the query;
// without one the query is used; every error is a 400 with a message.
// swapd has no pure function for the multipart case: the form is parsed by cpp-httplib inside
// the server (HttpServer::HandleMultipartInference reads its `model` field), so it is not here.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/model_id.h"
#include "fuzz/fuzz_check.h"

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
  if (!r.ok()) {
    FUZZ_CHECK(r.status().code() == ErrorCode::kInvalidArgument, "a bad request is a 400");
    FUZZ_CHECK(!r.status().message().empty(), "an error says what is wrong");
    return 0;
  }
  const JsonRequest& request = r.value();
  FUZZ_CHECK(!request.model.empty(), "a request names a model");
  FUZZ_CHECK(request.document.is_object(), "the document is an object");
  // Filters serialize the document again: that must be safe for anything that was accepted.
  (void)request.document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto it = request.document.find("model");
  if (it != request.document.end() && it->is_string()) {
    FUZZ_CHECK(request.model == it->get<std::string>(), "the body's model wins");
  } else {
    FUZZ_CHECK(query && request.model == *query, "the query's model is used");
  }
  return 0;
}
