// `performance:` (llama-swap's settings of its machine sampling, GET /api/performance):
// `disabled` (default false) and `every` (default 5s), a Go duration ("5s", "1m") or a number of
// seconds, at least 5 seconds as llama-swap requires. Each problem is reported at its place. Pure;
// thread safe.
#pragma once

#include "config/config.h"
#include "config/field_reader.h"

namespace swapd {

// Reads the top-level `performance:` map into `config.performance`; null keeps the defaults.
void ReadPerformanceSection(const YamlEntry& e, FieldReader& fields, Config& config);

}  // namespace swapd
