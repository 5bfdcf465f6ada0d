// `ui:` (llama-swap's settings of its web UI): `activity.session_id`, the request headers whose
// value names a client's session (the first one a request has), sent to /api/events readers in the
// uiConfig event. Other keys under `ui` are reported as unknown (warnings), as elsewhere. Pure;
// thread safe.
#pragma once

#include "config/config.h"
#include "config/field_reader.h"

namespace swapd {

// Reads the top-level `ui:` map into `config.ui.session_id_headers`: names trimmed, empty ones
// dropped, repeats (in any case) dropped, as llama-swap normalizes them. A null or empty list
// leaves no header.
void ReadUiSection(const YamlEntry& e, FieldReader& fields, Config& config);

}  // namespace swapd
