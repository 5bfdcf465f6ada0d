// GET /api/bench (?limit= 1-1000, 100): `swapd bench`'s scoreboard, the newest row of each
// (model, mode, partner) in `store`, newest first, read afresh on every request: {rows:[{id,
// machine, ...BenchRow's JSON}]}. Without a store (null: store.path none, or it could not be
// opened) the list is empty; a failed query adds `error` to the empty list. The handler runs on the
// front door's threads; `store` must outlive `door`'s serving.
#pragma once

#include "frontdoor/front_door.h"
#include "scoreboard/bench_store.h"

namespace swapd {

void AddBenchRoutes(FrontDoor& door, BenchStore* store);

}  // namespace swapd
