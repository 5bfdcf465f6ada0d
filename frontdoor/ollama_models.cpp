#include "frontdoor/ollama_models.h"

#include <filesystem>
#include <regex>

#include "base/stable_hash.h"
#include "base/time_text.h"
#include "base/unix_time.h"

namespace swapd {
namespace {

using nlohmann::json;

// Ollama lists a model without an expiry this far away (keep_alive -1).
constexpr const char* kNeverExpires = "2318-08-18T00:00:00Z";

// The model file its command line names (a .gguf, else -m / --model's value), else "".
std::string OllamaModelFile(const ModelConfig& model) {
  for (const std::string& word : model.argv) {
    if (word.ends_with(".gguf")) return word;
  }
  for (size_t i = 0; i + 1 < model.argv.size(); ++i) {
    if (model.argv[i] == "-m" || model.argv[i] == "--model") return model.argv[i + 1];
  }
  return "";
}

std::string OllamaFirstMatch(const std::string& text, const std::regex& pattern) {
  std::smatch match;
  return std::regex_search(text, match, pattern) ? match.str(1) : "";
}

// The size of the model's file in bytes; 0 when its cmd names none or it cannot be read.
uint64_t OllamaFileSize(const ModelConfig* model) {
  if (model == nullptr) return 0;
  const std::string file = OllamaModelFile(*model);
  if (file.empty()) return 0;
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(file, error);
  return error ? 0 : size;
}

// The entry /api/tags and /api/ps share.
json OllamaEntry(const std::string& name, const ModelConfig* model) {
  return {{"name", name},
          {"model", name},
          {"size", OllamaFileSize(model)},
          {"digest", OllamaDigest(name)},
          {"details", OllamaDetails(model)}};
}

}  // namespace

std::string OllamaDigest(const std::string& name) {
  std::string hex;
  for (const char* salt : {"a", "b", "c", "d"}) {
    hex += Fnv1a().Add(salt).AddSeparator().Add(name).Hex();
  }
  return hex;
}

json OllamaDetails(const ModelConfig* model) {
  json details = {{"parent_model", ""},  {"format", ""},         {"family", ""},
                  {"families", nullptr}, {"parameter_size", ""}, {"quantization_level", ""}};
  if (model == nullptr) return details;
  std::string file = OllamaModelFile(*model);
  file = file.substr(file.rfind('/') == std::string::npos ? 0 : file.rfind('/') + 1);
  if (file.ends_with(".gguf")) details["format"] = "gguf";
  static const std::regex kQuant(R"(((?:I?Q\d+_[A-Z0-9_]*[A-Z0-9])|BF16|F16|F32|(?:Q\d+_\d)))",
                                 std::regex::icase);
  static const std::regex kSize(R"((?:^|[-_.])(\d+(?:\.\d+)?[BbMm])(?:[-_.]|$))");
  static const std::regex kFamily(R"(^([A-Za-z]+\d*)(?:[-_.]|$))");
  details["quantization_level"] = OllamaFirstMatch(file, kQuant);
  details["parameter_size"] = OllamaFirstMatch(file, kSize);
  std::string family = OllamaFirstMatch(file, kFamily);
  for (char& c : family) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (model->metadata.is_object() && model->metadata.contains("family") &&
      model->metadata["family"].is_string()) {
    family = model->metadata["family"].get<std::string>();
  }
  details["family"] = family;
  if (!family.empty()) details["families"] = json::array({family});
  return details;
}

json OllamaTags(const Config& config) {
  const std::string modified = Rfc3339(UnixNow());
  std::map<std::string, json> sorted;
  auto add = [&](const std::string& name, const ModelConfig* model) {
    json entry = OllamaEntry(name, model);
    entry["modified_at"] = modified;
    sorted[name] = std::move(entry);
  };
  for (const auto& [id, model] : config.models) {
    if (!model.unlisted) add(id, &model);
  }
  for (const auto& [id, selector] : config.selectors) {
    if (!selector.unlisted) add(id, nullptr);
  }
  for (const auto& [id, peer] : config.peers) {
    for (const std::string& model : peer.models) add(PeerModelId(id, model), nullptr);
  }
  json models = json::array();
  for (auto& [name, entry] : sorted) models.push_back(std::move(entry));
  return {{"models", std::move(models)}};
}

json OllamaPs(const std::vector<ModelSnapshot>& running, const Config& config, int64_t now,
              std::chrono::steady_clock::time_point steady_now) {
  json models = json::array();
  for (const ModelSnapshot& snapshot : running) {
    const BackendState state = snapshot.backend.state;
    if (state != BackendState::kReady && state != BackendState::kStarting) continue;
    const ModelConfig* model = config.FindModel(snapshot.id);
    json entry = OllamaEntry(snapshot.id, model);
    uint64_t vram = 0;
    for (const auto& [gpu, bytes] : snapshot.cost.vram) vram += bytes;
    if (snapshot.cost.ram + vram > 0) entry["size"] = snapshot.cost.ram + vram;
    entry["size_vram"] = vram;
    if (snapshot.idle_deadline) {
      const auto left =
          std::chrono::ceil<std::chrono::seconds>(*snapshot.idle_deadline - steady_now);
      entry["expires_at"] = Rfc3339(now + std::max<int64_t>(left.count(), 0));
    } else {
      entry["expires_at"] =
          snapshot.ttl.count() > 0 ? Rfc3339(now + snapshot.ttl.count()) : kNeverExpires;
    }
    if (model != nullptr && model->capabilities && model->capabilities->context > 0) {
      entry["context_length"] = model->capabilities->context;
    }
    models.push_back(std::move(entry));
  }
  return {{"models", std::move(models)}};
}

json OllamaShow(const ModelConfig* model) {
  json details = OllamaDetails(model);
  json capabilities = json::array({"completion"});
  json info = json::object();
  if (model != nullptr) {
    const std::string arch = details["family"].get<std::string>();
    if (!arch.empty()) info["general.architecture"] = arch;
    info["general.basename"] = model->id;
    if (!model->description.empty()) info["general.description"] = model->description;
    if (const auto& caps = model->capabilities) {
      if (caps->tools) capabilities.push_back("tools");
      for (const std::string& in : caps->in) {
        if (in == "image") capabilities.push_back("vision");
      }
      if (caps->context > 0) {
        info[(arch.empty() ? std::string("general") : arch) + ".context_length"] = caps->context;
      }
    }
  }
  return {{"modelfile", ""},
          {"parameters", ""},
          {"template", ""},
          {"details", std::move(details)},
          {"model_info", std::move(info)},
          {"capabilities", std::move(capabilities)},
          {"modified_at", Rfc3339(UnixNow())}};
}

}  // namespace swapd
