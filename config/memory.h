// swapd's memory keys (no llama-swap equivalent): the top-level `memory:` (budgets `ram` and
// `gpus`, each a size or `auto`; `margin`, `onProtected`, `sampleInterval`) and a model's
// `memory: {ram, vram}`, `pageCache: keep` and `swappable: false`. Sizes are bytes or "14GiB",
// "3.8GiB", "512MiB", "10G"; `vram` is one size (GPU 0) or a map of GPU index -> size. Each
// problem is reported at its place. Pure.
#pragma once

#include <string>

#include "config/config.h"
#include "config/diagnostics.h"
#include "config/field_reader.h"
#include "config/yaml_document.h"

namespace swapd {

// The top-level `memory:` map into `config`.
void ReadMemorySection(const YamlEntry& e, FieldReader& fields, MemoryConfig& config);

// A model's `memory:` map. `context` prefixes messages (`model "x": `).
MemoryAmount ReadModelMemory(const YamlEntry& e, const std::string& context, DiagnosticSink& sink);

// Turns `auto` budgets into numbers: what `machine` has minus the margin (memory.margin, else 10%
// and at least 512 MiB). Without a reading of the machine (or of any GPU), `auto` sets no budget
// and says so.
void ResolveAutoBudgets(MemoryConfig& memory, const std::optional<MachineMemory>& machine,
                        DiagnosticSink& sink);

// "14.0 GiB", "512 MiB", "900 B": a byte count for people.
std::string FormatBytes(uint64_t bytes);

// "ram 14.0 GiB, gpu0 3.8 GiB" ("" when empty).
std::string DescribeMemory(const MemoryAmount& amount);

}  // namespace swapd
