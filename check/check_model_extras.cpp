#include "check/check_model_extras.h"

#include "base/json_text.h"
#include "base/text.h"

namespace swapd {
namespace {

std::string TimeoutsText(const TimeoutsConfig& t, std::chrono::seconds idle_conn) {
  auto s = [](std::chrono::seconds v) {
    return v.count() == 0 ? std::string("off") : std::to_string(v.count()) + "s";
  };
  return "connect " + s(t.connect) + ", keepalive " + s(t.keepalive) + ", responseHeader " +
         s(t.response_header) + ", tlsHandshake " + s(t.tls_handshake) + ", idleConn " +
         (t.idle_conn ? s(*t.idle_conn) : s(idle_conn) + " (default)");
}

nlohmann::json TimeoutsJson(const TimeoutsConfig& t) {
  return {{"connect", t.connect.count()},
          {"keepalive", t.keepalive.count()},
          {"responseHeader", t.response_header.count()},
          {"tlsHandshake", t.tls_handshake.count()},
          {"expectContinue", t.expect_continue.count()},
          {"idleConn", t.idle_conn ? nlohmann::json(t.idle_conn->count()) : nullptr}};
}

}  // namespace

void DescribeModelExtras(const ModelConfig& m, const Config& config, std::ostream& o) {
  const auto timeout = m.health_check_timeout.value_or(config.health_check_timeout);
  o << "  healthCheckTimeout: " << timeout.count() << "s"
    << (m.health_check_timeout ? "" : " (the top-level value)") << "\n";
  if (!(m.timeouts == TimeoutsConfig{})) {
    o << "  timeouts: " << TimeoutsText(m.timeouts, kModelIdleConn) << "\n";
  }
  if (!m.set_params_by_id.empty()) {
    o << "  filters.setParamsByID (after setParams, for a request naming that id):\n";
    for (const auto& [id, by_id] : m.set_params_by_id) {
      o << "    " << id << ": " << JsonText(by_id.params) << "\n";
    }
  }
  if (m.capabilities) {
    const ModelCapabilities& c = *m.capabilities;
    o << "  capabilities: in " << Join(c.in, ", ", "-") << "; out " << Join(c.out, ", ", "-")
      << "; tools " << (c.tools ? "yes" : "no") << "; reranker " << (c.reranker ? "yes" : "no")
      << "; context " << (c.context > 0 ? std::to_string(c.context) : std::string("-")) << "\n";
  }
}

nlohmann::json ModelExtrasJson(const ModelConfig& m, const Config& config) {
  nlohmann::json by_id = nlohmann::json::object();
  for (const auto& [id, p] : m.set_params_by_id) by_id[id] = p.params;
  nlohmann::json caps = nullptr;
  if (m.capabilities) {
    const ModelCapabilities& c = *m.capabilities;
    caps = {{"in", c.in},
            {"out", c.out},
            {"tools", c.tools},
            {"reranker", c.reranker},
            {"context", c.context}};
  }
  return {
      {"healthCheckTimeout", m.health_check_timeout.value_or(config.health_check_timeout).count()},
      {"setParamsByID", by_id},
      {"capabilities", caps},
      {"timeouts", TimeoutsJson(m.timeouts)}};
}

void DescribeProfiles(const Config& config, std::ostream& o) {
  for (const auto& [id, s] : config.selectors) {
    o << "\nselector " << id << " (" << ToString(s.strategy);
    if (s.strategy == SelectorConfig::Strategy::kSpillover) o << ", spillover " << s.spillover;
    o << "): " << Join(s.targets, ", ", "-") << (s.unlisted ? " (unlisted)" : "") << "\n";
  }
  for (const auto& [id, peer] : config.peers) {
    o << "\npeer " << id << ": " << peer.proxy
      << (peer.api_key.empty() ? " (the client's key goes on)" : " (its own apiKey)") << "\n";
    for (const std::string& model : peer.models) {
      const PeerModelRef* bare = config.FindPeerModel(model);
      const bool by_name = bare != nullptr && bare->peer == id;
      o << "  " << id << "/" << model << (by_name ? " (also as \"" + model + "\")" : "") << "\n";
    }
    o << "  timeouts: " << TimeoutsText(peer.timeouts, kPeerIdleConn) << "\n";
  }
  for (const auto& [name, p] : config.profiles) {
    o << "\nprofile " << name << (p.description.empty() ? "" : ": " + p.description)
      << " (off until PUT /api/profiles/active)\n";
    for (const auto& [id, target] : p.pins) {
      o << "  " << id << " -> " << (target.empty() ? "disabled (404)" : target) << "\n";
    }
  }
}

nlohmann::json SelectorsJson(const Config& config) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [id, s] : config.selectors) {
    out[id] = {{"strategy", ToString(s.strategy)},
               {"targets", s.targets},
               {"spillover", s.spillover},
               {"unlisted", s.unlisted}};
  }
  return out;
}

nlohmann::json PeersJson(const Config& config) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [id, peer] : config.peers) {
    nlohmann::json names = nlohmann::json::array();
    for (const auto& [name, ref] : config.peer_models) {
      if (ref.peer == id) names.push_back(name);
    }
    out[id] = {{"proxy", peer.proxy},
               {"apiKey", !peer.api_key.empty()},
               {"models", peer.models},
               {"names", names},
               {"stripParams", peer.strip_params},
               {"setParams", peer.set_params},
               {"timeouts", TimeoutsJson(peer.timeouts)}};
  }
  return out;
}

nlohmann::json ProfilesJson(const Config& config) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, p] : config.profiles) {
    nlohmann::json pins = nlohmann::json::object();
    for (const auto& [id, target] : p.pins) {
      pins[id] = target.empty() ? nlohmann::json(nullptr) : nlohmann::json(target);
    }
    out[name] = {{"description", p.description}, {"pins", pins}};
  }
  return out;
}

}  // namespace swapd
