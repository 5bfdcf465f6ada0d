// `promtool check metrics` on a /metrics text, for integration tests. The model-server gauges
// carry the names Kubernetes' endpoint picker reads (`vllm:num_requests_waiting`, ...), whose
// colon promtool's linter flags as it does on vLLM's own /metrics; nothing else may be flagged.
#pragma once

#include <string>
#include <utility>

namespace swapd::testing {

// Runs `promtool check metrics` on `text`; returns its exit status and output.
std::pair<int, std::string> Promtool(const std::string& text);

// Empty when promtool finds nothing in `text` but the colons of the `vllm:` names (and nothing at
// all once they are renamed); else what it said.
std::string PromtoolProblems(const std::string& text);

}  // namespace swapd::testing
