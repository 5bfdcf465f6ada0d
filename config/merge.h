// Merging the files of `--config` and `--config-dir` into one tree, in order: maps merge key by
// key, lists append, a scalar set twice to different values is an error naming both places, and
// a model or group defined in two files is an error naming both files.
// Source trees are not modified (nodes may be shared). Not synchronized.
#pragma once

#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "config/yaml_document.h"

namespace swapd {

// Merges `files` (roots, in load order; null roots are skipped). Returns a null-kind node when
// there is nothing.
YamlNodePtr MergeTrees(const std::vector<YamlNodePtr>& files, DiagnosticSink& sink);

}  // namespace swapd
