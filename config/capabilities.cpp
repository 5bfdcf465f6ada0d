#include "config/capabilities.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "base/json_text.h"

namespace swapd {
namespace {

constexpr std::array<std::string_view, 3> kModalities = {"text", "audio", "image"};

class CapabilitiesReader {
 public:
  CapabilitiesReader(const YamlNode& node, const std::string& context, DiagnosticSink& sink)
      : node_(node), ctx_(context + "capabilities."), sink_(sink) {}

  std::optional<ModelCapabilities> Read(const nlohmann::json& value) {
    ModelCapabilities caps;
    if (!value.is_object()) return std::nullopt;
    for (const auto& [key, v] : value.items()) {
      if (key == "in" || key == "out") {
        Modalities(key, v, key == "in" ? caps.in : caps.out);
      } else if (key == "tools" || key == "reranker") {
        if (v.is_null()) continue;
        if (!v.is_boolean()) {
          Error(key, key + ": expected true or false");
          continue;
        }
        (key == "tools" ? caps.tools : caps.reranker) = v.get<bool>();
      } else if (key == "context") {
        if (v.is_null()) continue;
        if (!v.is_number_integer() || v.get<int64_t>() < 0) {
          Error(key, "context: expected a number of tokens (an integer >= 0)");
          continue;
        }
        caps.context = v.get<int64_t>();
      }
    }
    if (failed_) return std::nullopt;
    return caps;
  }

 private:
  void Modalities(const std::string& key, const nlohmann::json& v, std::vector<std::string>& out) {
    if (v.is_null()) return;
    if (!v.is_array()) {
      Error(key, key + ": expected a list of text, audio, image");
      return;
    }
    for (const auto& item : v) {
      const std::string text = item.is_string() ? item.get<std::string>() : JsonText(item);
      if (std::find(kModalities.begin(), kModalities.end(), text) == kModalities.end()) {
        Error(key, key + ": unknown modality \"" + text + "\" (expected text, audio or image)");
      } else if (std::find(out.begin(), out.end(), text) == out.end()) {
        out.push_back(text);
      }
    }
  }

  void Error(const std::string& key, const std::string& message) {
    const YamlEntry* e = node_.Find(key);
    sink_.Error(e ? e->value->pos : node_.pos, ctx_ + message);
    failed_ = true;
  }

  const YamlNode& node_;
  const std::string ctx_;
  DiagnosticSink& sink_;
  bool failed_ = false;
};

}  // namespace

std::optional<ModelCapabilities> ReadCapabilities(const nlohmann::json& value, const YamlNode& node,
                                                  const std::string& context,
                                                  DiagnosticSink& sink) {
  return CapabilitiesReader(node, context, sink).Read(value);
}

}  // namespace swapd
