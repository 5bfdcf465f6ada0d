#include "config/memory.h"

#include <algorithm>
#include <cstdio>

#include "config/schema_keys.h"
#include "config/slot_cache_settings.h"
#include "config/yaml_scalar.h"

namespace swapd {
namespace {

constexpr const char* kSizeHint = "a size such as 14GiB, 3.8GiB, 512MiB or a number of bytes";

std::optional<uint64_t> Size(const YamlNode& node, const std::string& what, DiagnosticSink& sink) {
  if (node.is_scalar()) {
    if (auto bytes = ParseByteSize(node.value)) return bytes;
  }
  sink.Error(node.pos, what + ": expected " + kSizeHint + ", got " + Describe(node));
  return std::nullopt;
}

// A GPU index: a whole number >= 0.
std::optional<int> GpuIndex(const YamlNode& key, const std::string& what, DiagnosticSink& sink) {
  const nlohmann::json v = key.is_scalar() ? ScalarToJson(key) : nullptr;
  if (v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < 1024) {
    return static_cast<int>(v.get<int64_t>());
  }
  sink.Error(key.pos,
             what + ": a GPU index must be a whole number such as 0, got " + Describe(key));
  return std::nullopt;
}

// One size (GPU 0) or a map of GPU index -> size.
std::map<int, uint64_t> PerGpu(const YamlNode& node, const std::string& what,
                               DiagnosticSink& sink) {
  std::map<int, uint64_t> out;
  if (node.is_map()) {
    for (const auto& e : node.entries) {
      auto index = GpuIndex(*e.key, what, sink);
      auto size = Size(*e.value, what + "." + e.key->value, sink);
      if (index && size) out[*index] = *size;
    }
  } else if (auto size = Size(node, what, sink)) {
    out[0] = *size;
  }
  return out;
}

bool IsAuto(const YamlNode& node) { return node.is_scalar() && node.value == "auto"; }

}  // namespace

void ReadMemorySection(const YamlEntry& e, FieldReader& fields, MemoryConfig& config) {
  if (!fields.IsMapOrError(e, "") || !e.value->is_map()) return;
  DiagnosticSink& sink = fields.sink();
  config.pos = e.key->pos;
  fields.CheckKeys(*e.value, MemoryKeys(), "memory: ", "memory.");
  for (const auto& m : e.value->entries) {
    const std::string& key = m.key->value;
    const YamlNode& v = *m.value;
    if (key == "ram") {
      if (IsAuto(v)) {
        config.ram_auto = true;
      } else if (auto size = Size(v, "memory.ram", sink)) {
        config.budget.ram = size;
      }
    } else if (key == "gpus") {
      if (IsAuto(v)) {
        config.gpus_auto = true;
      } else if (v.is_map()) {
        config.budget.vram = PerGpu(v, "memory.gpus", sink);
      } else {
        sink.Error(v.pos,
                   "memory.gpus: expected auto or a map of GPU index -> size (0: 3.8GiB), "
                   "got " +
                       Describe(v));
      }
    } else if (key == "margin") {
      config.margin = Size(v, "memory.margin", sink);
    } else if (key == "onProtected") {
      if (v.is_scalar() && (v.value == "wait" || v.value == "reject")) {
        config.wait_for_protected = v.value == "wait";
      } else {
        sink.Error(v.pos, "memory.onProtected: must be wait or reject, got " + Describe(v));
      }
    } else if (key == "evictProtectedKeys") {
      for (const RawText& k : fields.TextList(m, "memory.")) {
        if (k.text.empty()) {
          sink.Error(v.pos, "memory.evictProtectedKeys: an API key must not be empty");
        } else {
          config.evict_protected_keys.push_back(k.text);
        }
      }
    } else if (key == "overlapSwaps") {
      if (auto b = fields.Bool(m, "memory.")) config.overlap_swaps = *b;
    } else if (key == "sampleInterval") {
      const nlohmann::json n = v.is_scalar() ? ScalarToJson(v) : nullptr;
      if (n.is_number() && n.get<double>() >= 0 && n.get<double>() <= 3600) {
        config.sample_interval =
            std::chrono::milliseconds(static_cast<int64_t>(n.get<double>() * 1000));
      } else {
        sink.Error(v.pos, "memory.sampleInterval: expected seconds between 0 (off) and 3600, got " +
                              Describe(v));
      }
    }
  }
  if (config.margin && !config.ram_auto && !config.gpus_auto) {
    sink.Hint(config.pos, "memory.margin only applies to an `auto` budget");
  }
}

MemoryAmount ReadModelMemory(const YamlEntry& e, const std::string& context, DiagnosticSink& sink) {
  MemoryAmount amount;
  if (!e.value->is_map()) {
    if (!e.value->is_null()) {
      sink.Error(e.value->pos, context +
                                   "memory: expected a map such as {ram: 8GiB, vram: 3GiB}, "
                                   "got " +
                                   Describe(*e.value));
    }
    return amount;
  }
  for (const auto& m : e.value->entries) {
    const std::string& key = m.key->value;
    if (key == "ram") {
      amount.ram = Size(*m.value, context + "memory.ram", sink);
    } else if (key == "vram") {
      amount.vram = PerGpu(*m.value, context + "memory.vram", sink);
    }  // other keys: reported by CheckKeys
  }
  return amount;
}

void ResolveAutoBudgets(MemoryConfig& memory, const std::optional<MachineMemory>& machine,
                        DiagnosticSink& sink) {
  auto less_margin = [&memory](uint64_t total) -> uint64_t {
    const uint64_t margin = memory.margin.value_or(std::max<uint64_t>(total / 10, 512u << 20));
    return total > margin ? total - margin : 0;
  };
  if (memory.ram_auto) {
    if (machine && machine->ram > 0) {
      memory.budget.ram = less_margin(machine->ram);
    } else {
      sink.Warning(memory.pos,
                   "memory.ram: auto, but the machine's memory is unknown here: no RAM "
                   "budget");
    }
  }
  if (memory.gpus_auto) {
    if (machine && !machine->gpus.empty()) {
      for (const auto& [gpu, total] : machine->gpus) memory.budget.vram[gpu] = less_margin(total);
    } else {
      const std::string why =
          machine && !machine->gpu_note.empty() ? " (" + machine->gpu_note + ")" : "";
      sink.Warning(memory.pos, "memory.gpus: auto, but no GPU was found" + why + ": no GPU budget");
    }
  }
}

std::string FormatBytes(uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, kUnits[unit]);
  return text;
}

std::string DescribeMemory(const MemoryAmount& amount) {
  std::string out;
  auto add = [&out](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (amount.ram) add("ram " + FormatBytes(*amount.ram));
  for (const auto& [gpu, bytes] : amount.vram) {
    add("gpu" + std::to_string(gpu) + " " + FormatBytes(bytes));
  }
  return out;
}

}  // namespace swapd
