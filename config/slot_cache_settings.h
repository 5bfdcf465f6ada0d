// The slot cache's side of the config: the top-level keys slotCacheDir, slotCacheMaxBytes and
// slotCacheTimeout, the default directory, the per-model directory ${SLOT_DIR} expands to, and the
// key that says whether a saved cache still fits a model's definition. Pure functions (the
// environment is read through the given function); thread safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/env_macros.h"
#include "config/field_reader.h"

namespace swapd {

// Reads one of the three keys into `config`; returns false when `e` is none of them.
bool ReadSlotCacheSetting(const YamlEntry& e, FieldReader& fields, Config& config);

// Where slot caches go when slotCacheDir is not set: $CACHE_DIRECTORY/slots (systemd's
// CacheDirectory=), else $XDG_CACHE_HOME/swapd/slots, else $HOME/.cache/swapd/slots, else
// /var/cache/swapd/slots.
std::string DefaultSlotCacheDir(const GetEnvFunction& getenv);

// The directory of one model under `root`: its id with every character outside [A-Za-z0-9._-]
// replaced by '_' (plus a short hash of the id when that changed it, so two ids never share one).
std::string SlotDirFor(const std::string& root, const std::string& model_id);

// A path as written in a config file at `pos`: relative ones are relative to that file's directory.
std::string ResolveConfigPath(const std::string& path, const Position& pos);

// "1073741824", "512MiB", "20GiB", "10G", "1.5GB" -> bytes. nullopt when not a size.
std::optional<uint64_t> ParseByteSize(std::string_view text);

// 64-bit FNV-1a of `parts` (each followed by a NUL), as 16 hex digits. Stable across builds.
std::string StableHash(const std::vector<std::string>& parts);

}  // namespace swapd
