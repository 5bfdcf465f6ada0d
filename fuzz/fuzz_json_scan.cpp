// fuzz_json_scan: the JSON scanner of the front door (frontdoor/json_scan.h). The input is any
// text. nlohmann::json::parse is the oracle: ScanJson accepts exactly the texts it parses (within
// the depth limit, which is checked against NestsDeeperThan), and the document rebuilt from the
// scanner's events (keys, decoded strings, numbers as ReadJsonNumber reads them, depths) equals
// the parsed one.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "frontdoor/json_scan.h"
#include "frontdoor/model_id.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/json_depth.h"

namespace swapd {
namespace {

// Rebuilds the document from the events.
class Builder : public JsonHandler {
 public:
  nlohmann::json root;

  void Value(size_t depth, JsonKind kind, std::string_view token) override {
    nlohmann::json value;
    switch (kind) {
      case JsonKind::kNull:
        break;
      case JsonKind::kBoolean:
        value = token == "true";
        break;
      case JsonKind::kString:
        value = DecodeJsonString(token);
        break;
      case JsonKind::kObject:
        value = nlohmann::json::object();
        break;
      case JsonKind::kArray:
        value = nlohmann::json::array();
        break;
      case JsonKind::kNumber: {
        const JsonNumber n = ReadJsonNumber(token);
        if (n.kind == JsonNumber::Kind::kSigned) value = n.i;
        if (n.kind == JsonNumber::Kind::kUnsigned) value = n.u;
        if (n.kind == JsonNumber::Kind::kFloat) value = n.f;
        break;
      }
    }
    nlohmann::json* slot = &root;
    if (depth > 0) {
      FUZZ_CHECK(depth <= open_.size(), "a value is inside an open container");
      nlohmann::json& parent = *open_[depth - 1];
      if (parent.is_object()) {
        slot = &parent[keys_[depth - 1]];
      } else {
        parent.push_back(nullptr);
        slot = &parent.back();
      }
    }
    *slot = std::move(value);
    if (kind == JsonKind::kObject || kind == JsonKind::kArray) {
      open_.resize(depth + 1);
      keys_.resize(depth + 1);
      open_[depth] = slot;
    }
  }
  void Key(size_t depth, std::string_view key) override {
    FUZZ_CHECK(depth > 0 && depth <= open_.size() && open_[depth - 1]->is_object(),
               "a key belongs to an open object");
    keys_[depth - 1] = std::string(key);
  }
  void End(size_t depth) override {
    FUZZ_CHECK(depth < open_.size(), "only an open container ends");
    open_.resize(depth);
    keys_.resize(depth);
  }

 private:
  std::vector<nlohmann::json*> open_;  // the open containers, by depth
  std::vector<std::string> keys_;      // the last key read in each open object
};

}  // namespace
}  // namespace swapd

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace swapd;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Builder builder;
  const auto error = ScanJson(text, builder, kMaxJsonDepth);
  const bool deep = NestsDeeperThan(text, kMaxJsonDepth);
  if (error && error->kind == JsonScanError::Kind::kTooDeep) {
    FUZZ_CHECK(deep, "too deep only when the brackets nest too deep");
    return 0;
  }
  if (deep) return 0;  // nlohmann would parse it; swapd refuses it
  const nlohmann::json parsed =
      nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!error == !parsed.is_discarded(), "accepted exactly when nlohmann parses it");
  if (error) {
    FUZZ_CHECK(error->message.starts_with("at line "), "an error says where");
    FUZZ_CHECK(error->offset <= text.size(), "an error points into the text");
    return 0;
  }
  FUZZ_CHECK(builder.root == parsed, "the events rebuild the parsed document");
  return 0;
}
