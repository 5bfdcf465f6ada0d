#include "daemon/check_model_extras.h"

namespace swapd {
namespace {

std::string Join(const std::vector<std::string>& items, const char* none) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? none : out;
}

}  // namespace

void DescribeModelExtras(const ModelConfig& m, const Config& config, std::ostream& o) {
  const auto timeout = m.health_check_timeout.value_or(config.health_check_timeout);
  o << "  healthCheckTimeout: " << timeout.count() << "s"
    << (m.health_check_timeout ? "" : " (the top-level value)") << "\n";
  if (!m.set_params_by_id.empty()) {
    o << "  filters.setParamsByID (after setParams, for a request naming that id):\n";
    for (const auto& [id, by_id] : m.set_params_by_id) {
      o << "    " << id << ": " << by_id.params.dump() << "\n";
    }
  }
  if (m.capabilities) {
    const ModelCapabilities& c = *m.capabilities;
    o << "  capabilities: in " << Join(c.in, "-") << "; out " << Join(c.out, "-") << "; tools "
      << (c.tools ? "yes" : "no") << "; reranker " << (c.reranker ? "yes" : "no") << "; context "
      << (c.context > 0 ? std::to_string(c.context) : std::string("-")) << "\n";
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
      {"capabilities", caps}};
}

void DescribeProfiles(const Config& config, std::ostream& o) {
  for (const auto& [id, s] : config.selectors) {
    o << "\nselector " << id << " (" << ToString(s.strategy);
    if (s.strategy == SelectorConfig::Strategy::kSpillover) o << ", spillover " << s.spillover;
    o << "): " << Join(s.targets, "-") << (s.unlisted ? " (unlisted)" : "") << "\n";
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
