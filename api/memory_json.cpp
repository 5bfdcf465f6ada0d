#include "api/memory_json.h"

#include <chrono>

#include "base/time_text.h"
#include "memory/memory_meter.h"

namespace swapd {
namespace {

nlohmann::json Vram(const std::map<int, uint64_t>& vram) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [gpu, bytes] : vram) out[std::to_string(gpu)] = bytes;
  return out;
}

}  // namespace

nlohmann::json MemoryAmountJson(const MemoryAmount& amount) {
  return {{"ram", amount.ram ? nlohmann::json(*amount.ram) : nlohmann::json(nullptr)},
          {"vram", Vram(amount.vram)}};
}

nlohmann::json FootprintJson(const Footprint& footprint) {
  return {{"ram", footprint.ram}, {"vram", Vram(footprint.vram)}};
}

nlohmann::json ModelMemoryJson(const ModelConfig* definition, const ModelSnapshot& snapshot,
                               const ModelMemory* measured) {
  nlohmann::json out = {{"cost", FootprintJson(snapshot.cost)}};
  if (definition != nullptr) {
    out["declared"] = MemoryAmountJson(definition->memory);
    out["swappable"] = definition->swappable;
    out["min_residency_seconds"] = definition->min_residency.count();
    out["prefetch"] = definition->prefetch;
    out["page_cache"] = definition->keep_page_cache ? "keep" : "auto";
  }
  if (measured == nullptr) {
    // Before the monitor's first sample: where its files are, from its cmd (`swapd bench --swap`
    // needs them at once); their size and residency come with the sample.
    if (definition != nullptr) out["files"] = {{"paths", ModelFilesOf(definition->argv)}};
    out["measured"] = nullptr;
    return out;
  }
  nlohmann::json files = {{"paths", measured->files},
                          {"bytes", measured->cache.bytes},
                          {"cached_bytes", measured->cache.cached},
                          {"missing", measured->cache.missing},
                          {"unmeasured", measured->cache.unmeasured}};
  out["files"] = std::move(files);
  out["running"] = measured->running;
  out["from_history"] = measured->from_history;
  out["learned"] = FootprintJson(measured->learned);  // from a sample, or from the history
  if (!measured->measured) {
    out["measured"] = nullptr;
    return out;
  }
  nlohmann::json vram = nlohmann::json::object();
  for (const auto& [gpu, bytes] : measured->vram) {
    vram[std::to_string(gpu)] = bytes >= 0 ? nlohmann::json(bytes) : nlohmann::json(nullptr);
  }
  out["measured"] = {{"at", Rfc3339(std::chrono::system_clock::to_time_t(measured->measured_at))},
                     {"pid", measured->pid},
                     {"rss_bytes", measured->process.rss},
                     {"anon_bytes", measured->process.anon},
                     {"file_mapped_bytes", measured->process.file},
                     {"vram_bytes", std::move(vram)}};
  return out;
}

nlohmann::json MemorySummaryJson(const MemoryAmount& budget,
                                 const std::vector<ModelSnapshot>& models, const MemoryView& view) {
  Footprint used;
  for (const ModelSnapshot& m : models) {
    if (m.backend.state != BackendState::kStopped && m.backend.state != BackendState::kFailed) {
      used += m.cost;
    }
  }
  nlohmann::json gpus = nlohmann::json::object();
  for (const auto& [index, device] : view.gpus) {
    gpus[std::to_string(index)] = {{"uuid", device.uuid},
                                   {"total_bytes", device.total_bytes},
                                   {"used_bytes", device.used_bytes}};
  }
  return {
      {"budget", MemoryAmountJson(budget)},
      {"in_use", FootprintJson(used)},
      {"sample_interval_seconds", view.interval.count() / 1000.0},
      {"samples", view.samples},
      {"gpu_tool", view.gpu_tool.empty() ? nlohmann::json(nullptr) : nlohmann::json(view.gpu_tool)},
      {"gpu_error", view.gpu_error},
      {"gpus", std::move(gpus)},
      {"store",
       view.store_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(view.store_path)},
      {"store_error", view.store_error}};
}

}  // namespace swapd
