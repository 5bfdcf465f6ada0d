#include "frontdoor/model_list.h"

#include <algorithm>

#include "base/text.h"

namespace swapd {
namespace {

bool Has(const std::vector<std::string>& list, const char* value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

void AddCapabilities(const ModelCapabilities& caps, nlohmann::json& item) {
  if (!caps.in.empty() || !caps.out.empty()) {
    item["architecture"] = {{"input_modalities", caps.in},
                            {"output_modalities", caps.out},
                            {"modality", Join(caps.in, "+") + "->" + Join(caps.out, "+")}};
  }
  item["capabilities"] = {
      {"vision", Has(caps.in, "image")},
      {"audio_transcriptions", Has(caps.in, "audio")},
      {"audio_speech", Has(caps.out, "audio")},
      {"image_generation", Has(caps.out, "image")},
      {"image_to_image", Has(caps.in, "image") && Has(caps.out, "image")},
      {"function_calling", caps.tools},
      {"reranker", caps.reranker},
  };
  if (caps.tools) item["supported_parameters"] = {"tools", "tool_choice"};
  if (caps.context > 0) {
    item["context_length"] = caps.context;
    item["meta"]["n_ctx"] = caps.context;
  }
}

nlohmann::json ModelListEntry(const Config& config, const std::string& id, int64_t created,
                              bool loaded) {
  return {{"id", id},
          {"object", "model"},
          {"created", created},
          {"owned_by", config.owned_by},
          {"status", {{"value", loaded ? "loaded" : "unloaded"}}}};
}

nlohmann::json LocalModelStatus(const BackendInfo& backend) {
  switch (backend.state) {
    case BackendState::kReady:
    case BackendState::kStopping:  // its process is still there
      return {{"value", "loaded"}};
    case BackendState::kStarting:
      return {{"value", "loading"}};
    case BackendState::kStopped:
      break;
    case BackendState::kFailed: {
      nlohmann::json status = {{"value", "unloaded"}, {"failed", true}};
      if (backend.exit_code) status["exit_code"] = *backend.exit_code;
      return status;
    }
  }
  return {{"value", "unloaded"}};
}

}  // namespace swapd
