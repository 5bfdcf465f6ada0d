#include "check/check_command.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "backends/port_allocator.h"
#include "base/json_text.h"
#include "check/check_matrix.h"
#include "check/check_memory.h"
#include "check/check_model_extras.h"
#include "config/loader.h"
#include "memory/footprint_monitor.h"

namespace swapd {
namespace {

using json = nlohmann::json;

std::string Plural(size_t n, std::string_view noun) {
  std::string s = std::to_string(n) + " " + std::string(noun);
  if (n != 1) s += "s";
  return s;
}

std::string Seconds(std::chrono::seconds s) { return std::to_string(s.count()) + "s"; }

std::string SecondsOrNever(std::chrono::seconds s) { return s.count() == 0 ? "never" : Seconds(s); }

std::string YesNo(bool b) { return b ? "true" : "false"; }

std::string JoinOr(const std::vector<std::string>& items, std::string_view none) {
  if (items.empty()) return std::string(none);
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += QuoteWord(item);
  }
  return out;
}

std::string Where(const Position& pos) { return pos.line > 0 ? pos.ToString() : ""; }

void DescribeGlobals(const Config& c, std::ostream& o) {
  o << "globals:\n"
    << "  healthCheckTimeout: " << Seconds(c.health_check_timeout) << "\n"
    << "  logLevel: " << c.log_level << "\n"
    << "  logToStdout: " << c.log_to_stdout << "\n"
    << "  startPort: " << c.start_port << "\n"
    << "  globalTTL: " << SecondsOrNever(c.global_ttl) << "\n"
    << "  unloadTimeout: " << Seconds(c.unload_timeout) << "\n"
    << "  apiKeys: "
    << (c.api_keys.empty() ? "none (no authentication)" : Plural(c.api_keys.size(), "key")) << "\n"
    << "  preload: " << JoinOr(c.preload, "none") << "\n"
    << "  sendLoadingState: " << YesNo(c.send_loading_state) << "\n"
    << "  includeAliasesInList: " << YesNo(c.include_aliases_in_list) << "\n"
    << "  slotCacheDir: " << c.slot_cache_dir << "\n"
    << "  slotCacheMaxBytes: " << c.slot_cache_max_bytes << "\n"
    << "  slotCacheTimeout: " << Seconds(c.slot_cache_timeout) << "\n";
}

void DescribeGroup(const GroupConfig& g, std::ostream& o) {
  o << "\ngroup " << QuoteWord(g.name) << ":\n"
    << "  swap: " << YesNo(g.swap)
    << (g.swap ? "  (one member at a time)" : "  (members run together)") << "\n"
    << "  exclusive: " << YesNo(g.exclusive)
    << (g.exclusive ? "  (loading a member unloads other groups)" : "  (other groups keep running)")
    << "\n"
    << "  persistent: " << YesNo(g.persistent)
    << (g.persistent ? "  (never unloaded by other groups)" : "") << "\n"
    << "  members: " << JoinOr(g.members, "none") << "\n";
}

void DescribeArgv(std::string_view label, const std::vector<std::string>& argv,
                  std::string_view none, std::ostream& o) {
  if (argv.empty()) {
    o << "  " << label << ": " << none << "\n";
    return;
  }
  o << "  " << label << ":\n";
  for (const auto& word : argv) o << "    " << QuoteWord(word) << "\n";
}

// The configured ${PORT} and what happens when it is taken, looked at now.
std::string DescribePort(const ModelConfig& m) {
  if (m.port == 0) return "none (cmd does not use ${PORT}: the proxy's port is used as written)";
  const std::string port = std::to_string(m.port);
  if (!PortBindable(m.port)) {
    return port + " (in use now: if it still is when the model starts, swapd starts it on the " +
           "next free port above and logs it)";
  }
  return port + " (free now; if it is taken when the model starts, swapd starts it on the next " +
         "free port above and logs it)";
}

void DescribeModel(const ModelConfig& m, const Config& config, std::ostream& o) {
  const bool matrix = config.matrix.has_value();
  o << "\nmodel " << QuoteWord(m.id);
  if (m.pos.line > 0) o << "  (" << m.pos.ToString() << ")";
  o << ":\n";
  if (!m.name.empty()) o << "  name: " << m.name << "\n";
  if (!m.description.empty()) o << "  description: " << m.description << "\n";
  if (!matrix) o << "  group: " << m.group << "\n";
  if (m.priority != 0) o << "  priority: " << m.priority << "\n";
  o << "  aliases: " << JoinOr(m.aliases, "none") << "\n";
  DescribeArgv("argv", m.argv, "none (no cmd: the proxy is an already running server)", o);
  DescribeArgv("cmdStop", m.stop_argv, "none (SIGTERM to the process group)", o);
  if (m.env.empty()) {
    o << "  env: none (swapd's own environment)\n";
  } else {
    o << "  env (after swapd's own environment, later wins):\n";
    for (const auto& [name, value] : m.env) {
      o << "    " << name << "=";
      if (value.empty()) {
        o << "  (set to empty, not unset)";
      } else {
        o << QuoteWord(value);
      }
      o << "\n";
    }
  }
  o << "  proxy: " << m.proxy << "\n"
    << "  port: " << DescribePort(m) << "\n"
    << "  slot cache: "
    << (m.slot_dir.empty() ? std::string("none (cmd does not use ${SLOT_DIR})")
                           : m.slot_dir + " (key " + m.slot_key + ")")
    << "\n"
    << "  checkEndpoint: "
    << (m.check_endpoint.empty() ? std::string("none (ready once spawned)") : m.check_endpoint)
    << "\n"
    << "  ttl: " << SecondsOrNever(m.ttl) << "\n"
    << "  unloadTimeout: " << Seconds(m.unload_timeout) << "\n"
    << "  concurrencyLimit: " << m.concurrency_limit << "\n"
    << "  unlisted: " << YesNo(m.unlisted) << "\n"
    << "  useModelName: "
    << (m.use_model_name.empty() ? std::string("none (model field forwarded unchanged)")
                                 : m.use_model_name)
    << "\n";
  bool no_set = m.set_params.is_null() || m.set_params.empty();
  if (m.strip_params.empty() && no_set && m.set_params_by_id.empty()) {
    o << "  filters: none\n";
  } else {
    o << "  filters:\n"
      << "    stripParams: " << JoinOr(m.strip_params, "none") << "\n"
      << "    setParams: " << (no_set ? "none" : JsonText(m.set_params)) << "\n";
  }
  DescribeModelExtras(m, config, o);
  DescribeModelMemory(m, config, o);
  if (!m.metadata.is_null() && !m.metadata.empty()) {
    o << "  metadata: " << JsonText(m.metadata) << "\n";
  }
}

struct Counts {
  size_t errors = 0, warnings = 0, hints = 0;
};

Counts CountDiagnostics(const std::vector<Diagnostic>& diagnostics) {
  Counts c;
  for (const auto& d : diagnostics) {
    switch (d.severity) {
      case Diagnostic::Severity::kError:
        ++c.errors;
        break;
      case Diagnostic::Severity::kWarning:
        ++c.warnings;
        break;
      case Diagnostic::Severity::kHint:
        ++c.hints;
        break;
    }
  }
  return c;
}

std::string CountsSuffix(const Counts& c) {
  std::string s;
  if (c.warnings > 0) s += ", " + Plural(c.warnings, "warning");
  if (c.hints > 0) s += ", " + Plural(c.hints, "hint");
  return s;
}

// "file:line:col: severity: message", leaving out a position that is not known (a file that
// cannot be read) rather than printing "file:0:0".
std::string FormatDiagnostic(const Diagnostic& d) {
  std::string where = d.pos.file;
  if (d.pos.line > 0) {
    where += ":" + std::to_string(d.pos.line);
    if (d.pos.column > 0) where += ":" + std::to_string(d.pos.column);
  }
  if (where.empty()) where = "swapd";
  return where + ": " + ToString(d.severity) + ": " + d.message;
}

}  // namespace

std::string DescribeConfig(const Config& config) {
  std::ostringstream o;
  DescribeGlobals(config, o);
  DescribeMemoryBudget(config, o);
  if (config.matrix) {
    DescribeMatrix(config, o);
  } else {
    for (const auto& [name, group] : config.groups) DescribeGroup(group, o);
  }
  DescribeProfiles(config, o);
  for (const auto& [id, model] : config.models) DescribeModel(model, config, o);
  return o.str();
}

namespace {

json ConfigJson(const Config& c) {
  json groups = json::object();
  for (const auto& [name, g] : c.groups) {
    groups[name] = {{"swap", g.swap},
                    {"exclusive", g.exclusive},
                    {"persistent", g.persistent},
                    {"members", g.members},
                    {"definedAt", Where(g.pos)}};
  }
  json models = json::object();
  for (const auto& [id, m] : c.models) {
    json env = json::array();
    for (const auto& [name, value] : m.env) env.push_back({{"name", name}, {"value", value}});
    json set_params = m.set_params.is_null() ? json::object() : m.set_params;
    models[id] = {
        {"name", m.name},
        {"description", m.description},
        {"group", c.matrix ? json(nullptr) : json(m.group)},
        {"priority", m.priority},
        {"aliases", m.aliases},
        {"argv", m.argv},
        {"cmdStop", m.stop_argv},
        {"env", env},
        {"proxy", m.proxy},
        {"port", m.port},
        // Whether another process holds the configured port now (the model would then start on
        // the next free one above); null without ${PORT}.
        {"portInUseNow", m.port == 0 ? json(nullptr) : json(!PortBindable(m.port))},
        {"slotDir", m.slot_dir},
        {"slotKey", m.slot_key},
        {"checkEndpoint", m.check_endpoint.empty() ? "none" : m.check_endpoint},
        {"ttl", m.ttl.count()},
        {"unloadTimeout", m.unload_timeout.count()},
        {"concurrencyLimit", m.concurrency_limit},
        {"unlisted", m.unlisted},
        {"useModelName", m.use_model_name},
        {"filters", {{"stripParams", m.strip_params}, {"setParams", set_params}}},
        {"metadata", m.metadata.is_null() ? json::object() : m.metadata},
        {"definedAt", Where(m.pos)},
    };
    models[id].update(ModelExtrasJson(m, c));
    models[id].update(ModelMemoryCheckJson(m, c));
  }
  json doc = {
      {"healthCheckTimeout", c.health_check_timeout.count()},
      {"logLevel", c.log_level},
      {"logToStdout", c.log_to_stdout},
      {"startPort", c.start_port},
      {"globalTTL", c.global_ttl.count()},
      {"unloadTimeout", c.unload_timeout.count()},
      {"apiKeyCount", c.api_keys.size()},
      {"preload", c.preload},
      {"sendLoadingState", c.send_loading_state},
      {"includeAliasesInList", c.include_aliases_in_list},
      {"ownedBy", c.owned_by},
      {"slotCacheDir", c.slot_cache_dir},
      {"slotCacheMaxBytes", c.slot_cache_max_bytes},
      {"slotCacheTimeout", c.slot_cache_timeout.count()},
      {"groups", groups},
      {"matrix", c.matrix ? MatrixJson(*c.matrix, c) : json(nullptr)},
      {"profiles", ProfilesJson(c)},
      {"selectors", SelectorsJson(c)},
      {"peers", PeersJson(c)},
      {"memory", MemoryBudgetJson(c)},
      {"storePath", c.store_path},
      {"models", models},
  };
  return doc;
}

}  // namespace

std::string DescribeConfigJson(const Config& config) { return JsonText(ConfigJson(config), 2); }

int RunCheck(const LoadOptions& load_options, bool as_json, std::ostream& out, std::ostream& err) {
  LoadResult result = LoadConfig(load_options);
  if (result.ok()) {
    for (Diagnostic& d : PageCacheWarnings(*result.config, load_options.machine->ram)) {
      result.diagnostics.push_back(std::move(d));
    }
  }
  Counts counts = CountDiagnostics(result.diagnostics);
  size_t models = result.config ? result.config->models.size() : 0;
  size_t groups = result.config ? result.config->groups.size() : 0;

  if (as_json) {
    json diagnostics = json::array();
    for (const auto& d : result.diagnostics) diagnostics.push_back(ToJson(d));
    json doc = {{"valid", result.ok()},
                {"diagnostics", diagnostics},
                {"summary",
                 {{"models", models},
                  {"groups", groups},
                  {"errors", counts.errors},
                  {"warnings", counts.warnings},
                  {"hints", counts.hints}}},
                {"config", result.ok() ? ConfigJson(*result.config) : json(nullptr)}};
    out << JsonText(doc, 2) << "\n";
    return result.ok() ? 0 : 1;
  }

  for (const auto& d : result.diagnostics) err << FormatDiagnostic(d) << "\n";
  if (!result.ok()) {
    if (counts.errors == 0) err << "error: the configuration could not be loaded\n";
    err << Plural(std::max<size_t>(counts.errors, 1), "error") << CountsSuffix(counts)
        << ": configuration rejected\n";
    return 1;
  }
  out << DescribeConfig(*result.config) << "\n"
      << Plural(models, "model") << ", "
      << (result.config->matrix ? Plural(result.config->matrix->sets.size(), "matrix set")
                                : Plural(groups, "group"))
      << ": OK" << CountsSuffix(counts) << "\n";
  return 0;
}

}  // namespace swapd
