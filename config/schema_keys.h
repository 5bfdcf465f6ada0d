// The keys a config may contain at each level: the ones swapd implements, the ones llama-swap
// knows but swapd does not implement yet (reported as "not supported yet, ignored"), and, for a
// key that is neither, the nearest known key to suggest ("did you mean cmdStop?").
// Constant tables; thread safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace swapd {

struct KeySet {
  std::span<const std::string_view> supported;
  std::span<const std::string_view> unsupported;  // known to llama-swap, ignored by swapd

  bool IsSupported(std::string_view key) const;
  bool IsUnsupported(std::string_view key) const;
  // The known key closest to `key` (same letters in another case, or a small edit distance).
  std::optional<std::string> Suggest(std::string_view key) const;
};

const KeySet& TopLevelKeys();
const KeySet& ModelKeys();
const KeySet& FilterKeys();
const KeySet& CapabilitiesKeys();
const KeySet& ProfileKeys();
const KeySet& SelectorKeys();
const KeySet& TimeoutsKeys();
const KeySet& StoreKeys();        // store:
const KeySet& UiKeys();           // ui:
const KeySet& UiActivityKeys();   // ui.activity:
const KeySet& PerformanceKeys();  // performance:
const KeySet& MemoryKeys();       // the top-level memory:
const KeySet& ModelMemoryKeys();  // a model's memory:
const KeySet& PeerKeys();
const KeySet& PeerFilterKeys();
const KeySet& GroupKeys();
const KeySet& AliasKeys();  // an alias written as a map (newer llama-swap)
const KeySet& HooksKeys();
const KeySet& OnStartupKeys();
const KeySet& RoutingKeys();
const KeySet& RouterKeys();
const KeySet& RouterSettingsKeys();
const KeySet& MatrixKeys();
const KeySet& SchedulerKeys();
const KeySet& SchedulerSettingsKeys();
const KeySet& FifoKeys();

}  // namespace swapd
