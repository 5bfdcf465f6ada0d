// Reads one entry under `models:` into a RawModel: its settings, aliases and filters, with
// their types checked; macros are expanded later (model_builder.h). Internal to config/.
#pragma once

#include "config/diagnostics.h"
#include "config/field_reader.h"
#include "config/raw_config.h"
#include "config/yaml_document.h"

namespace swapd {

RawModel ReadModelEntry(const YamlEntry& m, FieldReader& fields, DiagnosticSink& sink);

}  // namespace swapd
