// `timeouts` of a model or a peer: llama-swap's keys (connect, keepalive, responseHeader,
// tlsHandshake, expectContinue, idleConn), whole seconds >= 0, each problem reported at its place.
// Unknown keys are the caller's (FieldReader::CheckKeys with TimeoutsKeys()). Pure.
#pragma once

#include <string>

#include "config/config.h"
#include "config/diagnostics.h"
#include "config/yaml_document.h"

namespace swapd {

// `context` prefixes messages (`model "x": `, `peers.y.`).
TimeoutsConfig ReadTimeouts(const YamlNode& node, const std::string& context, DiagnosticSink& sink);

}  // namespace swapd
