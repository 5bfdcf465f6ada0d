// Pieces of the Prometheus text exposition format that every layer writing /metrics shares: a
// label value escaped, and a metric's HELP and TYPE lines. Pure: safe from any thread.
#pragma once

#include <ostream>
#include <string>

namespace swapd {

// `value` as a label value: backslash, double quote and newline escaped (without the quotes).
std::string PrometheusLabel(const std::string& value);

// "# HELP <name> <help>\n# TYPE <name> <type>\n".
void PrometheusHeader(std::ostream& out, const char* name, const char* type, const char* help);

}  // namespace swapd
