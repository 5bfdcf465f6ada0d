// POST /api/config/reload: runs `reload` (the daemon's: load, validate, swap, notify) and answers
// what it did: 200 {"status": "ok", "added": [...], "removed": [...], "changed": [...],
// "unchanged": [...], "diagnostics": [...]}, or, when the new configuration has errors and the
// running one stays, 400 with an OpenAI-shaped error whose "error" object also carries
// "diagnostics". The handler runs on the front door's threads and blocks while the reload runs.
#pragma once

#include <functional>

#include "config/diff.h"
#include "frontdoor/front_door.h"

namespace swapd {

void AddReloadRoute(FrontDoor& door, std::function<ReloadOutcome()> reload);

}  // namespace swapd
