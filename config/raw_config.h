// The config as written, after the schema walk and before expansion: every field keeps its YAML
// node so that later steps (macros, ports, validation) can still point at it. Produced by
// config_reader.h, consumed by model_builder.h and validate.h. Internal to config/.
// Plain values; not synchronized.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/macros.h"
#include "config/yaml_document.h"

namespace swapd {

// A string field: its text and its node (null when the field is absent).
struct RawText {
  std::string text;
  YamlNodePtr node;

  bool present() const { return node != nullptr; }
  Position Locate(std::string_view needle) const {
    return node ? node->Locate(needle) : Position{};
  }
};

struct RawModel {
  std::string id;
  Position pos;
  RawText cmd, cmd_stop, proxy, check_endpoint, name, description, use_model_name, strip_params;
  std::vector<RawText> aliases;
  std::vector<RawText> env;
  int64_t ttl = -1;                  // -1 = globalTTL
  int64_t unload_timeout = 0;        // 0 = the top-level unloadTimeout
  int64_t concurrency_limit = 0;     // 0 = the default, 10
  int64_t health_check_timeout = 0;  // 0 = the top-level healthCheckTimeout
  bool unlisted = false;
  std::vector<Macro> macros;
  YamlNodePtr set_params;        // a map, or null
  YamlNodePtr set_params_by_id;  // a map of maps, or null
  YamlNodePtr capabilities;      // a map, or null
  YamlNodePtr timeouts;          // a map, or null
  YamlNodePtr metadata;          // a map, or null
  MemoryAmount memory;           // swapd's memory keys, read at once
  bool keep_page_cache = false;
  bool swappable = true;
  int64_t min_residency = 0;  // seconds
  std::optional<bool> send_loading_state;
  bool prefetch = false;
};

struct RawGroup {
  std::string name;
  Position pos;
  bool swap = true;
  bool exclusive = true;
  bool persistent = false;
  bool exclusive_set = false;  // `exclusive` was written (its default surprises people)
  std::vector<RawText> members;
};

struct RawPriority {
  std::string model;  // an id or alias
  int64_t priority = 0;
  Position pos;
};

struct RawPin {
  std::string id;
  std::string target;  // "" disables the id (`~` or "")
  Position pos;        // of the id
  Position target_pos;
};

struct RawProfile {
  std::string name;
  std::string description;
  std::vector<RawPin> pins;
  Position pos;
};

struct RawConfig {
  Config globals;  // the top-level settings; models, groups and aliases are still empty
  std::vector<Macro> macros;
  std::vector<RawText> api_keys;
  std::vector<RawText> preload;
  std::vector<RawModel> models;       // in file order
  std::vector<RawGroup> groups;       // in file order
  YamlNodePtr matrix;                 // the matrix map when the matrix router is used, else null
  Position matrix_key;                // where its key is
  std::vector<RawPriority> priority;  // routing.scheduler.settings.fifo.priority
  std::vector<RawProfile> profiles;   // in file order
  YamlNodePtr selectors;              // the selectors map (read by LinkSelectors), or null
  YamlNodePtr peers;                  // the peers map (read by LinkPeers), or null
  bool store_set = false;             // store.path was given (a path, or none)
};

}  // namespace swapd
