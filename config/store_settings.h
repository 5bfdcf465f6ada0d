// `store:` (llama-swap's key for its SQLite database): `path`, where swapd keeps its history
// (models' measured footprints), or `none` for no history. Pure functions (the environment is read
// through the given function); thread safe.
#pragma once

#include <string>

#include "config/config.h"
#include "config/env_macros.h"
#include "config/field_reader.h"

namespace swapd {

// Reads the top-level `store:` map into `config` (store_path; "" for `none`). `set` becomes true
// when a path (or none) was given.
void ReadStoreSection(const YamlEntry& e, FieldReader& fields, Config& config, bool& set);

// Where the database goes when store.path is not set: $STATE_DIRECTORY/swapd.db (systemd's
// StateDirectory=), else $XDG_STATE_HOME/swapd/swapd.db, else $HOME/.local/state/swapd/swapd.db,
// else /var/lib/swapd/swapd.db.
std::string DefaultStorePath(const GetEnvFunction& getenv);

}  // namespace swapd
