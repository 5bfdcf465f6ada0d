// The validated, typed configuration of swapd. It is produced by config/loader.h from YAML and is
// everything the rest of swapd knows of the configuration: other modules never see YAML.
// Plain value types, immutable once loaded; share a `std::shared_ptr<const Config>` across threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/proxy_url.h"
#include "config/matrix.h"

namespace swapd {

// Where something is in a config file. Line and column are 1-based; 0 means unknown.
struct Position {
  std::string file;
  int line = 0;
  int column = 0;
  std::string ToString() const;  // "file:line:col"
};

// One problem (or hint) found while loading a config.
struct Diagnostic {
  enum class Severity { kError, kWarning, kHint };
  Severity severity = Severity::kError;
  Position pos;
  std::string message;           // e.g. `model "qwen3-4b-duo": unknown macro ${PROT} in cmd`
  std::string ToString() const;  // "file:line:col: error: message"
};
const char* ToString(Diagnostic::Severity severity);  // "error", "warning", "hint"
// {"file", "line", "column" (0: unknown), "severity", "message"}: `swapd check --json` and the
// answer of POST /api/config/reload.
nlohmann::json ToJson(const Diagnostic& d);

// The name of the implicit group that holds every model not listed in a group.
inline constexpr std::string_view kDefaultGroup = "(default)";

// `capabilities` of a model, as llama-swap renders them into /v1/models (architecture,
// capabilities, supported_parameters, context_length).
struct ModelCapabilities {
  std::vector<std::string> in;   // input modalities: text, audio, image
  std::vector<std::string> out;  // output modalities
  bool tools = false;            // function calling
  bool reranker = false;
  int64_t context = 0;  // context length in tokens; 0 = not said
};

// The default `timeouts.idleConn` of a local model: short, as an idle connection holds one of
// llama-server's few HTTP threads (whose own limit is 5 s).
inline constexpr std::chrono::seconds kModelIdleConn{3};
// ... and of a peer: llama-swap's.
inline constexpr std::chrono::seconds kPeerIdleConn{90};

// `timeouts` of a model or a peer: the connections swapd makes to it, in whole seconds, with
// llama-swap's keys and defaults; 0 disables one. expectContinue is read for compatibility:
// swapd answers a client's Expect itself and never sends one on.
struct TimeoutsConfig {
  std::chrono::seconds connect{30};
  std::chrono::seconds keepalive{30};       // TCP keep-alive idle time and probe interval
  std::chrono::seconds response_header{0};  // the longest wait for the answer's head
  std::chrono::seconds tls_handshake{10};
  std::chrono::seconds expect_continue{1};
  // How long an idle keep-alive connection is kept. Unset: kModelIdleConn or kPeerIdleConn.
  std::optional<std::chrono::seconds> idle_conn;

  bool operator==(const TimeoutsConfig&) const = default;
};

// Memory in bytes: RAM, and VRAM per GPU index (as nvidia-smi numbers the devices).
struct MemoryAmount {
  std::optional<uint64_t> ram;
  std::map<int, uint64_t> vram;

  bool empty() const { return !ram && vram.empty(); }
  bool operator==(const MemoryAmount&) const = default;
};

// What the machine has, for `auto` budgets: read by the daemon and handed to the loader (config/
// reads nothing itself).
struct MachineMemory {
  uint64_t ram = 0;              // MemTotal; 0 = unknown
  std::map<int, uint64_t> gpus;  // GPU index -> total VRAM; empty when no tool reports one
  std::string gpu_note;          // why no GPU is known ("nvidia-smi not found"), for messages
};

// The top-level `memory:` of swapd (no llama-swap key): budgets that the resident models must fit
// in, and how footprints are measured. `auto` budgets are resolved at load from what the machine
// has (LoadOptions::machine, minus `margin`); a Scheduler sees numbers only.
struct MemoryConfig {
  MemoryAmount budget;  // `ram` and `gpus`; empty: no budget (groups or matrix alone decide)
  bool ram_auto = false;
  bool gpus_auto = false;
  std::optional<uint64_t> margin;  // kept free by an `auto` budget; unset: 10% (at least 512 MiB)
  // A load that would evict a `swappable: false` model waits for it to go (its ttl, an unload)
  // up to the request's deadline (true), or is refused at once with 503 + Retry-After (false).
  bool wait_for_protected = false;
  // `evictProtectedKeys`: API keys whose requests may evict `swappable: false` models anyway.
  std::vector<std::string> evict_protected_keys;
  // How often running models are measured (RSS, VRAM, page cache); 0 disables measuring.
  std::chrono::milliseconds sample_interval{2000};
  // `overlapSwaps`: a swap starts the incoming model while the outgoing one still stops, when the
  // budgets show that both fit at once (backends/scheduler.h, "Overlapped swaps").
  bool overlap_swaps = true;
  Position pos;

  bool HasBudget() const { return !budget.empty() || ram_auto || gpus_auto; }
};

// The fields of a model that carry ${PORT}, before it was expanded: what a backend needs to run
// the model on another port than the configured one (config/model_port.h). Every other macro is
// expanded already; "${PORT}" is left in place.
struct PortTemplate {
  std::string cmd;       // `cmd` as text, comment lines dropped, not yet split into words
  std::string cmd_stop;  // `cmdStop` the same way ("" when there is none)
  std::vector<std::pair<std::string, std::string>> env;
  std::string proxy;           // as ModelConfig::proxy (no trailing '/')
  std::string check_endpoint;  // as ModelConfig::check_endpoint ("" for `none`)

  bool operator==(const PortTemplate&) const = default;
};

struct ModelConfig {
  std::string id;    // the key under `models:`
  std::string name;  // display name (`name`), may be empty
  std::string description;
  std::vector<std::string> aliases;  // globally unique, never equal to a model id
  std::vector<std::string> argv;     // `cmd` after macro expansion and word splitting
  // `cmdStop` split the same way; empty means "SIGTERM the process group". The word `${PID}` is
  // left in place (inside words too) for the backend to substitute when it stops the process.
  std::vector<std::string> stop_argv;
  // `env` entries in order, appended after swapd's own environment; later wins.
  // {"CUDA_VISIBLE_DEVICES", ""} means present and empty, which is not the same as unset.
  std::vector<std::pair<std::string, std::string>> env;
  std::string proxy;  // base URL, e.g. "http://localhost:5800" (no trailing '/')
  int port = 0;       // the port allocated for ${PORT}; 0 if cmd does not use it
  // Set iff cmd uses ${PORT}: the port-bearing fields before expansion. A backend whose
  // configured port is taken runs ModelForPort(model, another port) (config/model_port.h).
  std::optional<PortTemplate> port_template;
  // The slot cache (backends/slot_cache.h): the directory ${SLOT_DIR} expanded to, empty when
  // cmd does not use it (no slot cache); and a hash of what makes a saved cache valid (cmd before
  // ${PORT} and ${SLOT_DIR} expansion, and env), 16 hex digits.
  std::string slot_dir;
  std::string slot_key;
  std::string check_endpoint = "/health";   // empty means `none`: ready as soon as spawned
  std::chrono::seconds ttl{0};              // resolved (-1 became globalTTL); 0 = never unload
  std::chrono::seconds unload_timeout{10};  // grace between SIGTERM/cmdStop and SIGKILL
  bool unlisted = false;
  std::string use_model_name;  // empty = forward the model field untouched
  int concurrency_limit = 10;
  std::vector<std::string> strip_params;                 // body keys to remove (never "model")
  nlohmann::json set_params = nlohmann::json::object();  // body keys to set
  // filters.setParamsByID: body keys set for a request that asked for exactly this id (the model's
  // id or one of these keys, which are aliases too), after setParams.
  struct ParamsForId {
    nlohmann::json params;  // a JSON object
    Position pos;           // where its key is
  };
  std::map<std::string, ParamsForId> set_params_by_id;
  std::optional<ModelCapabilities> capabilities;
  // The model's own healthCheckTimeout; unset: the top-level one.
  std::optional<std::chrono::seconds> health_check_timeout;
  TimeoutsConfig timeouts;
  // What the model declares it needs (`memory: {ram, vram}`); a budget counts the larger of this
  // and what was last measured.
  MemoryAmount memory;
  bool keep_page_cache = false;  // `pageCache: keep`: its model files count against the RAM budget
  bool swappable = true;         // `swappable: false`: never stopped to make room for another
  // `minResidency`: once started, protected like `swappable: false` for this long after it became
  // ready (0: not at all). Its ttl, an unload, a reload and shutdown still stop it.
  std::chrono::seconds min_residency{0};
  // `prefetch: true`: its model files are read into the page cache before its process starts.
  bool prefetch = false;
  // `sendLoadingState` of the model, over the top-level one (Config::send_loading_state).
  std::optional<bool> send_loading_state;
  nlohmann::json metadata = nlohmann::json::object();
  std::string group;     // name of its group; kDefaultGroup when ungrouped
  int64_t priority = 0;  // routing.scheduler fifo priority: a higher one is served first
  Position pos;          // where the model's key is
};

struct GroupConfig {
  std::string name;
  bool swap = true;                  // only one member runs at a time
  bool exclusive = true;             // loading a member unloads other (non-persistent) groups
  bool persistent = false;           // other groups never unload this one
  std::vector<std::string> members;  // model ids, in config order
  Position pos;
};

// A profile: pins switched on together at runtime (PUT /api/profiles/active). While it is active,
// a request for a pinned id goes to the pin's target instead; an empty target makes the id
// unknown. Model ids always win over pins.
struct ProfileConfig {
  std::string name;
  std::string description;
  std::map<std::string, std::string> pins;  // id -> model id or alias; "" = disabled
  Position pos;
};

// A selector: a virtual model id that picks one of its targets per request. pin: always the
// first; warm: the first ready, else the first starting, else the first; spillover: the least busy
// live target while it has fewer than `spillover` requests, else the next cold one, else the
// least busy.
struct SelectorConfig {
  enum class Strategy { kPin, kWarm, kSpillover };
  std::string id;
  Strategy strategy = Strategy::kPin;
  std::vector<std::string> targets;  // model ids or aliases, as written
  int64_t spillover = 1;
  std::string name;
  std::string description;
  bool unlisted = false;
  nlohmann::json metadata = nlohmann::json::object();
  Position pos;
};
const char* ToString(SelectorConfig::Strategy strategy);

// A peer: another OpenAI-compatible server (another swapd or llama-swap, a hosted API) whose
// models swapd forwards to as they are, addressed as "<peer id>/<model>". Nothing local is started
// or stopped for them.
struct PeerConfig {
  std::string id;
  std::string proxy;    // base URL (no trailing '/'); the request's path is appended
  ProxyUrl url;         // `proxy` taken apart, once, at load
  std::string api_key;  // empty: the client's Authorization and x-api-key go on unchanged
  std::vector<std::string> models;  // the peer's own model names
  std::vector<std::string> strip_params;
  nlohmann::json set_params = nlohmann::json::object();
  TimeoutsConfig timeouts;
  Position pos;
};

// `model "id"`: how every message names a model.
inline std::string ModelLabel(const std::string& id) { return "model \"" + id + "\""; }

// How swapd names a peer's model: "<peer>/<model>".
inline std::string PeerModelId(const std::string& peer, const std::string& model) {
  return peer + "/" + model;
}

// A model of a peer, as a request may name it.
struct PeerModelRef {
  std::string peer;   // its id, a key of Config::peers
  std::string model;  // the name the peer knows
  std::string id() const { return PeerModelId(peer, model); }
};

// `ui:` (config/ui_settings.h).
struct UiSettings {
  UiSettings();  // llama-swap's defaults
  // `ui.activity.session_id`: the request headers that name a client's session (/api/events
  // uiConfig).
  std::vector<std::string> session_id_headers;
};

// `performance:` (config/performance_settings.h): llama-swap's sampling of the machine's CPU,
// RAM, network and GPUs for GET /api/performance.
struct PerformanceSettings {
  bool disabled = false;
  std::chrono::milliseconds every{5000};  // between samples; at least 5 s

  bool operator==(const PerformanceSettings&) const = default;
};

struct Config {
  UiSettings ui;  // first: what builds a Config before it cannot throw (GCC 12's warnings)
  std::chrono::seconds health_check_timeout{120};
  std::string log_level = "info";       // debug|info|warn|error
  std::string log_to_stdout = "proxy";  // proxy|upstream|both|none
  int start_port = 5800;
  std::chrono::seconds global_ttl{0};
  std::chrono::seconds unload_timeout{10};
  std::vector<std::string> api_keys;
  std::vector<std::string> preload;  // model ids (aliases already resolved)
  bool send_loading_state = false;
  bool include_aliases_in_list = false;
  // /v1/models owned_by of every entry: clients detect llama-swap (and so swapd) by "llama-swap".
  std::string owned_by = "llama-swap";
  // The slot cache: where each model's ${SLOT_DIR} lives (absolute; resolved against the config
  // file's directory, defaulted from the environment), the bound on all saved files together, and
  // the time a save (or a restore) may take before the stop (or the start) goes on without it.
  std::string slot_cache_dir;
  uint64_t slot_cache_max_bytes = uint64_t{16} << 30;
  std::chrono::seconds slot_cache_timeout{30};
  MemoryConfig memory;
  // `store.path`: the SQLite database of swapd's history (measured footprints). Absolute, defaulted
  // from the environment (see config/store_settings.h); empty with `path: none` (no history).
  std::string store_path;
  // `captureBuffer`: MB of memory for the request/response captures of recent requests
  // (GET /api/captures/{id}); 0 = no captures. llama-swap's default, 5 (its example file says 10).
  int64_t capture_buffer_mb = 5;
  PerformanceSettings performance;

  std::map<std::string, ModelConfig> models;  // by id, sorted
  std::map<std::string, GroupConfig> groups;  // by name; has kDefaultGroup iff a model is ungrouped
  std::map<std::string, std::string> aliases;  // alias -> model id
  // The matrix router (routing.router.use: matrix, or a top-level `matrix:`); groups otherwise.
  std::optional<MatrixConfig> matrix;
  std::map<std::string, ProfileConfig> profiles;    // by name
  std::map<std::string, SelectorConfig> selectors;  // by id
  std::map<std::string, PeerConfig> peers;          // by id
  // "<peer>/<model>" for every model of every peer, and the bare model name when one peer alone
  // lists it and no local id claims it -> the peer's model.
  std::map<std::string, PeerModelRef> peer_models;

  // Resolves a model id or an alias. Returns nullptr when neither matches.
  const ModelConfig* FindModel(std::string_view id_or_alias) const;
  const GroupConfig& GroupOf(const ModelConfig& model) const;
  // A peer's model named "<peer>/<model>" (or by its bare name, see peer_models), or nullptr.
  const PeerModelRef* FindPeerModel(std::string_view name) const;
};

}  // namespace swapd
