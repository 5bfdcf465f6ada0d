// fuzz_filters: a model's request filters applied to a JSON body (frontdoor/filters.h
// ApplyFilters). The input is four parts, one per line except the last: useModelName, stripParams
// separated by commas, setParams as a JSON object (anything else means none), then the request
// body, which goes through ParseJsonRequest first as in the server. Checked invariants: nothing
// changed means the document is untouched; otherwise the returned text is the document, "model" is
// useModelName, stripped keys are gone unless set, set keys hold their value; applying the filters
// again changes nothing more.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "frontdoor/filters.h"
#include "frontdoor/model_id.h"
#include "fuzz/fuzz_check.h"

namespace swapd {
namespace {

// The next line of `rest` (without its newline); consumes it.
std::string_view NextLine(std::string_view& rest) {
  size_t eol = rest.find('\n');
  std::string_view line = rest.substr(0, eol);
  rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
  return line;
}

ModelConfig ModelFromHeader(std::string_view& rest) {
  ModelConfig model;
  model.id = "fuzz";
  model.use_model_name = std::string(NextLine(rest));
  std::string_view strip = NextLine(rest);
  while (!strip.empty()) {
    size_t comma = strip.find(',');
    model.strip_params.emplace_back(strip.substr(0, comma));
    strip = comma == std::string_view::npos ? std::string_view() : strip.substr(comma + 1);
  }
  std::string_view set = NextLine(rest);
  auto params = nlohmann::json::parse(set.begin(), set.end(), nullptr, false);
  if (params.is_object()) model.set_params = std::move(params);
  return model;
}

// Whether `s` survives a JSON round trip unchanged (dump() replaces invalid UTF-8).
bool IsValidUtf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

}  // namespace
}  // namespace swapd

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swapd;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  const ModelConfig model = ModelFromHeader(rest);
  // As the server does: the body is parsed (and refused when it is unreadable) first.
  Result<JsonRequest> request = ParseJsonRequest(rest, "fuzz");
  if (!request.ok()) return 0;
  nlohmann::json document = ParseJsonDocument(rest);
  FUZZ_CHECK(document.is_object(), "an accepted body parses to an object");
  const nlohmann::json original = document;

  std::optional<std::string> text = ApplyFilters(model, model.id, document);
  if (!text) {
    FUZZ_CHECK(document == original, "no change reported, none made");
    return 0;
  }
  auto reparsed = nlohmann::json::parse(*text, nullptr, false);
  FUZZ_CHECK(reparsed.is_object(), "the filtered body is a JSON object");
  if (IsValidUtf8(model.use_model_name)) {
    FUZZ_CHECK(reparsed == document, "the filtered body is the document");
  }
  if (!model.use_model_name.empty()) {
    FUZZ_CHECK(document.at("model") == model.use_model_name, "useModelName replaces model");
  }
  for (const std::string& key : model.strip_params) {
    if (key == "model" || model.set_params.contains(key)) continue;
    FUZZ_CHECK(!document.contains(key), key.c_str());
  }
  for (const auto& [key, value] : model.set_params.items()) {
    if (key == "model") continue;
    FUZZ_CHECK(document.contains(key) && document.at(key) == value, key.c_str());
  }
  nlohmann::json twice = document;
  (void)ApplyFilters(model, model.id, twice);
  FUZZ_CHECK(twice == document, "filters are idempotent");
  return 0;
}
