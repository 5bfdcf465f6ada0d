#include "config/timeouts.h"

#include "config/yaml_scalar.h"

namespace swapd {

TimeoutsConfig ReadTimeouts(const YamlNode& node, const std::string& context,
                            DiagnosticSink& sink) {
  TimeoutsConfig t;
  if (!node.is_map()) return t;
  for (const auto& e : node.entries) {
    const std::string& key = e.key->value;
    std::chrono::seconds* field = key == "connect"          ? &t.connect
                                  : key == "keepalive"      ? &t.keepalive
                                  : key == "responseHeader" ? &t.response_header
                                  : key == "tlsHandshake"   ? &t.tls_handshake
                                  : key == "expectContinue" ? &t.expect_continue
                                                            : nullptr;
    if (field == nullptr && key != "idleConn") continue;  // reported by CheckKeys
    const nlohmann::json v = e.value->is_scalar() ? ScalarToJson(*e.value) : nullptr;
    if (!v.is_number_integer() || v.get<int64_t>() < 0) {
      sink.Error(e.value->pos,
                 context + "timeouts." + key + ": expected whole seconds >= 0 (0 disables it)");
      continue;
    }
    const std::chrono::seconds seconds(v.get<int64_t>());
    if (field != nullptr) {
      *field = seconds;
    } else {
      t.idle_conn = seconds;
    }
  }
  return t;
}

}  // namespace swapd
