#include "config/model_builder.h"

#include <algorithm>
#include <set>

#include "base/text.h"
#include "config/argv_split.h"
#include "config/capabilities.h"
#include "config/macros.h"
#include "config/slot_cache_settings.h"
#include "config/timeouts.h"
#include "config/yaml_scalar.h"

namespace swapd {
namespace {

constexpr std::string_view kDefaultProxy = "http://localhost:${PORT}";

// One string field on its way from YAML to ModelConfig.
struct Field {
  std::string name;  // as in the config: "cmd", "env", "filters.setParams", ...
  const RawText* raw = nullptr;
  std::string text;
};

class ModelBuilder {
 public:
  ModelBuilder(const RawModel& raw, const RawConfig& config, DiagnosticSink& sink)
      : raw_(raw),
        config_(config),
        sink_(sink),
        ctx_(ModelLabel(raw.id) + ": "),
        macros_(MergeMacros(raw.id, config.macros, raw.macros)) {}

  ModelConfig Build(int& next_port) {
    ModelConfig m;
    m.id = raw_.id;
    m.pos = raw_.pos;

    Field cmd{"cmd", &raw_.cmd, StripCommentLines(raw_.cmd.text)};
    Field cmd_stop{"cmdStop", &raw_.cmd_stop, StripCommentLines(raw_.cmd_stop.text)};
    Field proxy{"proxy", &raw_.proxy,
                raw_.proxy.present() ? raw_.proxy.text : std::string(kDefaultProxy)};
    Field check{"checkEndpoint", &raw_.check_endpoint,
                raw_.check_endpoint.present() ? raw_.check_endpoint.text : "/health"};
    Field name{"name", &raw_.name, raw_.name.text};
    Field description{"description", &raw_.description, raw_.description.text};
    Field use_model_name{"useModelName", &raw_.use_model_name, raw_.use_model_name.text};
    Field strip{"filters.stripParams", &raw_.strip_params, raw_.strip_params.text};
    std::vector<Field> env;
    for (const auto& e : raw_.env) env.push_back(Field{"env", &e, e.text});
    std::vector<Field*> fields = {&cmd,  &cmd_stop,    &proxy,          &check,
                                  &name, &description, &use_model_name, &strip};
    for (auto& e : env) fields.push_back(&e);

    for (Field* f : fields) f->text = ExpandMacros(std::move(f->text), macros_);
    nlohmann::json set_params = Json(raw_.set_params);
    nlohmann::json metadata = Json(raw_.metadata);
    nlohmann::json by_id = Json(raw_.set_params_by_id);
    nlohmann::json capabilities = Json(raw_.capabilities);

    // What a saved slot cache depends on, before swapd's own macros fill in a port or a path.
    std::vector<std::string> key_parts = {cmd.text};
    for (const auto& e : env) key_parts.push_back(e.text);
    m.slot_key = StableHash(key_parts);
    // ${SLOT_DIR}, like ${PORT}, exists only for models whose cmd uses it.
    if (cmd.text.find("${SLOT_DIR}") != std::string::npos) {
      m.slot_dir = SlotDirFor(config_.globals.slot_cache_dir, m.id);
      for (Field* f : fields) ReplaceAll(f->text, "${SLOT_DIR}", m.slot_dir);
      set_params = ExpandMacro(std::move(set_params), "SLOT_DIR", m.slot_dir);
      metadata = ExpandMacro(std::move(metadata), "SLOT_DIR", m.slot_dir);
      by_id = ExpandMacro(std::move(by_id), "SLOT_DIR", m.slot_dir);
    }

    // ${PORT} exists only for models whose cmd uses it (llama-swap's rule).
    bool cmd_has_port = cmd.text.find("${PORT}") != std::string::npos;
    if (cmd_has_port) {
      m.port_template = Template(cmd, cmd_stop, proxy, check, env);
      m.port = next_port++;
      if (m.port > 65535) {
        sink_.Error(cmd.raw->Locate("${PORT}"), ctx_ + "${PORT} would be " +
                                                    std::to_string(m.port) +
                                                    ", above 65535: lower "
                                                    "startPort");
      }
      const std::string port = std::to_string(m.port);
      for (Field* f : fields) ReplaceAll(f->text, "${PORT}", port);
      set_params = ExpandMacro(std::move(set_params), "PORT", m.port);
      metadata = ExpandMacro(std::move(metadata), "PORT", m.port);
      by_id = ExpandMacro(std::move(by_id), "PORT", m.port);
    }

    for (Field* f : fields) {
      // A model without cmd is reported once, not again through its default proxy.
      if (f == &proxy && !raw_.proxy.present() && TrimSpace(cmd.text).empty()) continue;
      CheckLeftovers(*f, f->text);
    }
    CheckLeftovers(Field{"filters.setParams", nullptr, ""}, set_params);
    CheckLeftovers(Field{"metadata", nullptr, ""}, metadata);
    CheckLeftovers(Field{"filters.setParamsByID", nullptr, ""}, by_id);
    CheckLeftovers(Field{"capabilities", nullptr, ""}, capabilities);

    BuildCommands(cmd, cmd_stop, m);
    BuildEnv(env, m);
    m.proxy = proxy.text;
    while (m.proxy.size() > 1 && m.proxy.back() == '/') m.proxy.pop_back();
    if (m.proxy.rfind("http://", 0) != 0 && m.proxy.rfind("https://", 0) != 0) {
      sink_.Error(Pos(proxy),
                  ctx_ + "proxy: must be an http:// or https:// URL, got \"" + proxy.text + "\"");
    }
    m.check_endpoint = check.text == "none" ? "" : check.text;
    m.name = name.text;
    m.description = description.text;
    m.use_model_name = use_model_name.text;
    for (const auto& a : raw_.aliases) m.aliases.push_back(a.text);
    m.unlisted = raw_.unlisted;
    m.ttl = raw_.ttl == -1 ? config_.globals.global_ttl : std::chrono::seconds(raw_.ttl);
    m.unload_timeout = raw_.unload_timeout == 0 ? config_.globals.unload_timeout
                                                : std::chrono::seconds(raw_.unload_timeout);
    m.concurrency_limit =
        raw_.concurrency_limit == 0 ? 10 : static_cast<int>(raw_.concurrency_limit);
    m.strip_params = SplitStripParams(strip.text);
    m.set_params = SetParams(std::move(set_params));
    m.metadata = metadata.is_object() ? std::move(metadata) : nlohmann::json::object();
    m.set_params_by_id = SetParamsById(by_id);
    if (raw_.capabilities) {
      m.capabilities = ReadCapabilities(capabilities, *raw_.capabilities, ctx_, sink_);
    }
    if (raw_.timeouts) m.timeouts = ReadTimeouts(*raw_.timeouts, ctx_, sink_);
    m.memory = raw_.memory;
    m.keep_page_cache = raw_.keep_page_cache;
    m.swappable = raw_.swappable;
    m.min_residency = std::chrono::seconds(raw_.min_residency);
    m.prefetch = raw_.prefetch;
    m.send_loading_state = raw_.send_loading_state;
    if (raw_.health_check_timeout > 0) {
      m.health_check_timeout = std::chrono::seconds(raw_.health_check_timeout);
    }
    HintStringBooleans(raw_.set_params, "filters.setParams");
    HintStringBooleans(raw_.metadata, "metadata");
    HintStringBooleans(raw_.set_params_by_id, "filters.setParamsByID");
    return m;
  }

 private:
  Position Pos(const Field& f) const {
    return f.raw && f.raw->present() ? f.raw->node->pos : raw_.pos;
  }

  nlohmann::json Json(const YamlNodePtr& node) const {
    if (!node) return nlohmann::json::object();
    return ExpandMacros(NodeToJson(*node), macros_);
  }

  // The port-bearing fields as they are before ${PORT} is expanded, shaped as BuildCommands,
  // BuildEnv and Build shape them (whose messages cover any problem).
  static PortTemplate Template(const Field& cmd, const Field& cmd_stop, const Field& proxy,
                               const Field& check, const std::vector<Field>& env) {
    PortTemplate t;
    t.cmd = cmd.text;
    t.cmd_stop = cmd_stop.text;
    for (const Field& f : env) {
      const size_t eq = f.text.find('=');
      if (eq == std::string::npos) continue;
      std::string key(TrimSpace(std::string_view(f.text).substr(0, eq)));
      if (!key.empty()) t.env.emplace_back(std::move(key), f.text.substr(eq + 1));
    }
    t.proxy = proxy.text;
    while (t.proxy.size() > 1 && t.proxy.back() == '/') t.proxy.pop_back();
    t.check_endpoint = check.text == "none" ? "" : check.text;
    return t;
  }

  void CheckLeftovers(const Field& f, const std::string& text) {
    CheckRefs(f, FindMacroRefs(text));
  }
  void CheckLeftovers(const Field& f, const nlohmann::json& value) {
    CheckRefs(f, FindMacroRefsInJson(value));
  }
  void CheckRefs(const Field& f, const std::vector<std::string>& refs) {
    std::set<std::string> seen;
    for (const auto& ref : refs) {
      if (ref == "PID" && f.name == "cmdStop") continue;
      if (!seen.insert(ref).second) continue;
      ReportLeftover(f, ref);
    }
  }

  void ReportLeftover(const Field& f, const std::string& ref) {
    const std::string slug = "${" + ref + "}";
    const YamlNodePtr& node = f.name == "filters.setParams"       ? raw_.set_params
                              : f.name == "filters.setParamsByID" ? raw_.set_params_by_id
                              : f.name == "capabilities"          ? raw_.capabilities
                              : f.name == "metadata"              ? raw_.metadata
                              : f.raw                             ? f.raw->node
                                                                  : nullptr;
    Position pos = node ? node->Locate(slug) : raw_.pos;
    std::string via;
    // A reference that is not written in the field came from a macro's value: point there.
    if (!node || !node->Mentions(slug)) {
      for (const auto& macro : macros_) {
        if (macro.node && macro.value.is_string() &&
            macro.value.get<std::string>().find(slug) != std::string::npos) {
          pos = macro.node->Locate(slug);
          via = " (through macro \"" + macro.name + "\")";
          break;
        }
      }
    }
    std::string message;
    auto declared =
        std::find_if(macros_.begin(), macros_.end(), [&](const Macro& m) { return m.name == ref; });
    if (ref == "PID") {
      message = slug + " in " + f.name + ": only cmdStop may use ${PID}";
    } else if (ref == "PORT") {
      message = f.name +
                " uses ${PORT} but cmd does not: ${PORT} is only allocated to models "
                "whose cmd uses it";
      if (f.name == "proxy" && !raw_.proxy.present()) {
        message =
            "cmd does not use ${PORT}, so the default proxy (http://localhost:${PORT}) "
            "has no port: set proxy, or use ${PORT} in cmd";
      }
    } else if (ref == "SLOT_DIR") {
      message = f.name +
                " uses ${SLOT_DIR} but cmd does not: the slot cache directory exists only for "
                "models whose cmd uses it (e.g. --slot-save-path ${SLOT_DIR})";
    } else if (declared != macros_.end()) {
      message = slug + " in " + f.name + via + " is not expanded: macro \"" + ref +
                "\" is declared after the macro that uses it (a macro may only use macros "
                "declared before it)";
    } else {
      message = "unknown macro " + slug + " in " + f.name + via;
    }
    sink_.Error(pos, ctx_ + message);
  }

  void BuildCommands(const Field& cmd, const Field& cmd_stop, ModelConfig& m) {
    if (TrimSpace(cmd.text).empty()) {
      if (raw_.proxy.present()) {
        sink_.Warning(Pos(cmd), ctx_ +
                                    "has no cmd: it cannot be started, requests to it will "
                                    "fail (llama-swap accepts such a config too)");
      } else {
        sink_.Error(Pos(cmd), ctx_ + "cmd is required");
      }
    } else {
      HintWindowsPath();
      auto argv = SplitCommand(cmd.text);
      if (argv.ok()) {
        m.argv = std::move(argv).value();
      } else {
        sink_.Error(Pos(cmd), ctx_ + "cmd: " + argv.status().message());
      }
    }
    if (!TrimSpace(StripCommentLines(cmd_stop.text)).empty()) {
      auto argv = SplitCommand(cmd_stop.text);
      if (argv.ok()) {
        m.stop_argv = std::move(argv).value();
      } else {
        sink_.Error(Pos(cmd_stop), ctx_ + "cmdStop: " + argv.status().message());
      }
    }
  }

  void HintWindowsPath() {
    if (HasWindowsPath(raw_.cmd.text)) {
      sink_.Hint(raw_.cmd.node->pos, ctx_ + "cmd " + std::string(kWindowsPathHint));
    }
    for (const auto& macro : raw_.macros) {
      if (macro.value.is_string() && HasWindowsPath(macro.value.get<std::string>())) {
        sink_.Hint(macro.pos,
                   ctx_ + "macro \"" + macro.name + "\" " + std::string(kWindowsPathHint));
      }
    }
  }

  void BuildEnv(const std::vector<Field>& env, ModelConfig& m) {
    for (const auto& f : env) {
      size_t eq = f.text.find('=');
      if (eq == std::string::npos) {
        sink_.Error(Pos(f), ctx_ + "env: \"" + f.text + "\" has no '=' (write " + f.text +
                                "= to set it to the empty string)");
        continue;
      }
      std::string key(TrimSpace(std::string_view(f.text).substr(0, eq)));
      if (key.empty()) {
        sink_.Error(Pos(f), ctx_ + "env: \"" + f.text + "\" has no variable name before '='");
        continue;
      }
      m.env.emplace_back(key, f.text.substr(eq + 1));
    }
  }

  nlohmann::json SetParams(nlohmann::json params) {
    if (!params.is_object()) return nlohmann::json::object();
    if (params.contains("model")) {
      const YamlEntry* e = raw_.set_params ? raw_.set_params->Find("model") : nullptr;
      sink_.Warning(e ? e->key->pos : raw_.pos,
                    ctx_ + "filters.setParams: model is never overridden, ignored");
      params.erase("model");
    }
    return params;
  }

  // Keys may use macros (`${MODEL_ID}:high`); each value is a map of body keys, never `model`.
  std::map<std::string, ModelConfig::ParamsForId> SetParamsById(const nlohmann::json& by_id) {
    std::map<std::string, ModelConfig::ParamsForId> out;
    if (!raw_.set_params_by_id || !by_id.is_object()) return out;
    const std::string where = "filters.setParamsByID";
    for (const auto& e : raw_.set_params_by_id->entries) {
      const std::string id = ExpandMacros(e.key->value, macros_);
      const auto refs = FindMacroRefs(id);
      if (!refs.empty()) {
        sink_.Error(e.key->pos, ctx_ + where + ": unknown macro ${" + refs.front() + "} in \"" +
                                    e.key->value + "\"");
        continue;
      }
      auto params = by_id.find(e.key->value);
      if (params == by_id.end() || !params->is_object()) {
        sink_.Error(e.value->pos, ctx_ + where + "." + id + ": expected a map of body keys");
        continue;
      }
      nlohmann::json set = *params;
      if (set.erase("model") > 0) {
        sink_.Warning(e.value->Find("model")->key->pos,
                      ctx_ + where + "." + id + ": model is never overridden, ignored");
      }
      if (!out.emplace(id, ModelConfig::ParamsForId{std::move(set), e.key->pos}).second) {
        sink_.Error(e.key->pos, ctx_ + where + ": \"" + id + "\" is listed twice");
      }
    }
    return out;
  }

  // Go's YAML keeps `on`, `yes`, ... as strings; say so where the JSON type matters.
  void HintStringBooleans(const YamlNodePtr& node, const std::string& where) {
    if (!node) return;
    if (node->is_scalar() && node->plain && Yaml11Bool(node->value)) {
      sink_.Hint(node->pos, ctx_ + where + ": " + node->value + " is the string \"" + node->value +
                                "\", not a boolean (as llama-swap reads it): write " +
                                (*Yaml11Bool(node->value) ? "true" : "false") +
                                " for a boolean, or quote it");
    }
    for (const auto& item : node->items) HintStringBooleans(item, where);
    for (const auto& e : node->entries) HintStringBooleans(e.value, where);
  }

  const RawModel& raw_;
  const RawConfig& config_;
  DiagnosticSink& sink_;
  const std::string ctx_;
  const std::vector<Macro> macros_;
};

}  // namespace

std::vector<std::string> SplitStripParams(const std::string& text) {
  std::set<std::string> params;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string p(TrimSpace(std::string_view(text).substr(start, comma - start)));
    if (!p.empty() && p != "model") params.insert(p);
    start = comma + 1;
  }
  return {params.begin(), params.end()};
}

ModelConfig BuildModel(const RawModel& raw, const RawConfig& config, int& next_port,
                       DiagnosticSink& sink) {
  return ModelBuilder(raw, config, sink).Build(next_port);
}

}  // namespace swapd
