#include "config/schema_keys.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

#include "base/text.h"

namespace swapd {
namespace {

using K = std::string_view;

constexpr std::array<K, 27> kTopSupported = {"healthCheckTimeout",
                                             "performance",
                                             "captureBuffer",
                                             "ui",
                                             "store",
                                             "memory",
                                             "ownedBy",
                                             "peers",
                                             "selectors",
                                             "profiles",
                                             "logLevel",
                                             "logToStdout",
                                             "startPort",
                                             "globalTTL",
                                             "unloadTimeout",
                                             "apiKeys",
                                             "macros",
                                             "hooks",
                                             "models",
                                             "groups",
                                             "routing",
                                             "sendLoadingState",
                                             "includeAliasesInList",
                                             "slotCacheDir",
                                             "slotCacheMaxBytes",
                                             "slotCacheTimeout",
                                             "matrix"};
constexpr std::array<K, 5> kTopUnsupported = {"logRequests", "logTimeFormat", "metricsMaxInMemory",
                                              "upstream", "security"};

constexpr std::array<K, 25> kModelSupported = {"cmd",
                                               "sendLoadingState",
                                               "memory",
                                               "pageCache",
                                               "swappable",
                                               "minResidency",
                                               "prefetch",
                                               "timeouts",
                                               "cmdStop",
                                               "proxy",
                                               "aliases",
                                               "env",
                                               "checkEndpoint",
                                               "ttl",
                                               "unloadTimeout",
                                               "unlisted",
                                               "useModelName",
                                               "name",
                                               "description",
                                               "concurrencyLimit",
                                               "filters",
                                               "macros",
                                               "metadata",
                                               "capabilities",
                                               "healthCheckTimeout"};

constexpr std::array<K, 4> kFilterSupported = {"stripParams", "setParams", "strip_params",
                                               "setParamsByID"};
constexpr std::array<K, 1> kFilterUnsupported = {"setParamsByMatch"};
constexpr std::array<K, 8> kSelectorSupported = {"strategy", "targets",     "settings", "balance",
                                                 "name",     "description", "unlisted", "metadata"};
constexpr std::array<K, 6> kTimeoutsSupported = {"connect",      "keepalive",      "responseHeader",
                                                 "tlsHandshake", "expectContinue", "idleConn"};
constexpr std::array<K, 7> kMemorySupported = {
    "ram", "gpus", "margin", "onProtected", "sampleInterval", "evictProtectedKeys", "overlapSwaps"};
constexpr std::array<K, 2> kModelMemorySupported = {"ram", "vram"};
constexpr std::array<K, 1> kStoreSupported = {"path"};
constexpr std::array<K, 1> kUiSupported = {"activity"};
constexpr std::array<K, 1> kUiActivitySupported = {"session_id"};
constexpr std::array<K, 2> kPerformanceSupported = {"disabled", "every"};
constexpr std::array<K, 5> kPeerSupported = {"proxy", "apiKey", "models", "filters", "timeouts"};
constexpr std::array<K, 3> kPeerFilterSupported = {"stripParams", "setParams", "strip_params"};
constexpr std::array<K, 2> kProfileSupported = {"description", "pins"};
constexpr std::array<K, 5> kCapabilitiesSupported = {"in", "out", "tools", "reranker", "context"};

constexpr std::array<K, 4> kGroupSupported = {"swap", "exclusive", "persistent", "members"};
constexpr std::array<K, 1> kAliasSupported = {"id"};
constexpr std::array<K, 2> kAliasUnsupported = {"name", "unlisted"};
constexpr std::array<K, 1> kHooksSupported = {"on_startup"};
constexpr std::array<K, 1> kOnStartupSupported = {"preload"};
constexpr std::array<K, 2> kRoutingSupported = {"router", "scheduler"};
constexpr std::array<K, 2> kRouterSupported = {"use", "settings"};
constexpr std::array<K, 2> kRouterSettingsSupported = {"groups", "matrix"};
constexpr std::array<K, 3> kMatrixSupported = {"vars", "evict_costs", "sets"};
constexpr std::array<K, 2> kSchedulerSupported = {"use", "settings"};
constexpr std::array<K, 1> kSchedulerSettingsSupported = {"fifo"};
constexpr std::array<K, 1> kFifoSupported = {"priority"};

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

bool KeySet::IsSupported(std::string_view key) const {
  return std::find(supported.begin(), supported.end(), key) != supported.end();
}

bool KeySet::IsUnsupported(std::string_view key) const {
  return std::find(unsupported.begin(), unsupported.end(), key) != unsupported.end();
}

std::optional<std::string> KeySet::Suggest(std::string_view key) const {
  const std::string lower = AsciiLower(key);
  std::optional<std::string> best;
  size_t best_distance = 0;
  for (auto list : {supported, unsupported}) {
    for (K known : list) {
      size_t d = EditDistance(lower, AsciiLower(known));
      if (!best || d < best_distance) {
        best = std::string(known);
        best_distance = d;
      }
    }
  }
  // Allow about one typo per four letters, at least one and at most three.
  size_t allowed = std::clamp<size_t>(key.size() / 4, 1, 3);
  if (best && best_distance <= allowed) return best;
  return std::nullopt;
}

namespace {
constexpr std::span<const K> kNone;
}  // namespace

const KeySet& TopLevelKeys() {
  static const KeySet kSet{kTopSupported, kTopUnsupported};
  return kSet;
}
const KeySet& ModelKeys() {
  static const KeySet kSet{kModelSupported, {}};
  return kSet;
}
const KeySet& FilterKeys() {
  static const KeySet kSet{kFilterSupported, kFilterUnsupported};
  return kSet;
}
const KeySet& SelectorKeys() {
  static const KeySet kSet{kSelectorSupported, kNone};
  return kSet;
}
const KeySet& TimeoutsKeys() {
  static const KeySet kSet{kTimeoutsSupported, kNone};
  return kSet;
}
const KeySet& MemoryKeys() {
  static const KeySet kSet{kMemorySupported, kNone};
  return kSet;
}
const KeySet& StoreKeys() {
  static const KeySet kSet{kStoreSupported, kNone};
  return kSet;
}
const KeySet& UiKeys() {
  static const KeySet kSet{kUiSupported, kNone};
  return kSet;
}
const KeySet& PerformanceKeys() {
  static const KeySet kSet{kPerformanceSupported, kNone};
  return kSet;
}

const KeySet& UiActivityKeys() {
  static const KeySet kSet{kUiActivitySupported, kNone};
  return kSet;
}
const KeySet& ModelMemoryKeys() {
  static const KeySet kSet{kModelMemorySupported, kNone};
  return kSet;
}
const KeySet& PeerKeys() {
  static const KeySet kSet{kPeerSupported, kNone};
  return kSet;
}
const KeySet& PeerFilterKeys() {
  static const KeySet kSet{kPeerFilterSupported, kNone};
  return kSet;
}
const KeySet& ProfileKeys() {
  static const KeySet kSet{kProfileSupported, kNone};
  return kSet;
}
const KeySet& CapabilitiesKeys() {
  static const KeySet kSet{kCapabilitiesSupported, kNone};
  return kSet;
}
const KeySet& GroupKeys() {
  static const KeySet kSet{kGroupSupported, kNone};
  return kSet;
}
const KeySet& AliasKeys() {
  static const KeySet kSet{kAliasSupported, kAliasUnsupported};
  return kSet;
}
const KeySet& HooksKeys() {
  static const KeySet kSet{kHooksSupported, kNone};
  return kSet;
}
const KeySet& OnStartupKeys() {
  static const KeySet kSet{kOnStartupSupported, kNone};
  return kSet;
}
const KeySet& RoutingKeys() {
  static const KeySet kSet{kRoutingSupported, kNone};
  return kSet;
}
const KeySet& RouterKeys() {
  static const KeySet kSet{kRouterSupported, kNone};
  return kSet;
}
const KeySet& RouterSettingsKeys() {
  static const KeySet kSet{kRouterSettingsSupported, kNone};
  return kSet;
}
const KeySet& MatrixKeys() {
  static const KeySet kSet{kMatrixSupported, kNone};
  return kSet;
}
const KeySet& SchedulerKeys() {
  static const KeySet kSet{kSchedulerSupported, kNone};
  return kSet;
}
const KeySet& SchedulerSettingsKeys() {
  static const KeySet kSet{kSchedulerSettingsSupported, kNone};
  return kSet;
}
const KeySet& FifoKeys() {
  static const KeySet kSet{kFifoSupported, kNone};
  return kSet;
}

}  // namespace swapd
