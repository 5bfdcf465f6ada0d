#include "config/matrix_link.h"

#include <functional>
#include <regex>
#include <set>

#include "config/yaml_scalar.h"

namespace swapd {
namespace {

bool IsVarName(const std::string& name) {
  static const std::regex kVar("[a-zA-Z0-9.-]{1,32}");
  return std::regex_match(name, kVar);
}

// Where the character at `offset` of a one-line scalar's text is (after its opening quote).
Position At(const YamlNode& node, size_t offset) {
  Position p = node.pos;
  const bool quoted = node.source && node.begin < node.source->size() &&
                      ((*node.source)[node.begin] == '"' || (*node.source)[node.begin] == '\'');
  if (node.value.find('\n') == std::string::npos) p.column += static_cast<int>(offset + quoted);
  return p;
}

class MatrixLinker {
 public:
  MatrixLinker(const Config& config, DiagnosticSink& sink) : config_(config), sink_(sink) {}

  std::optional<MatrixConfig> Link(const YamlNode& matrix, const Position& key) {
    MatrixConfig out;
    if (const YamlEntry* vars = matrix.Find("vars")) ReadVars(*vars, out);
    if (const YamlEntry* costs = matrix.Find("evict_costs")) ReadCosts(*costs, out);
    const YamlEntry* sets = matrix.Find("sets");
    if (sets == nullptr || !sets->value->is_map() || sets->value->entries.empty()) {
      if (sets != nullptr && !sets->value->is_null() && !sets->value->is_map()) {
        sink_.Error(sets->value->pos, "matrix.sets: expected a map of set name -> expression");
      } else {
        sink_.Error(sets ? sets->key->pos : key, "matrix: at least one set is required");
      }
      return std::nullopt;
    }
    ParseSets(*sets->value);
    for (const auto& [name, entry] : parsed_) {
      MatrixExpr expr;
      if (Resolve(name, expr)) resolved_[name] = std::move(expr);
    }
    for (const YamlEntry& e : sets->value->entries) {
      auto it = resolved_.find(e.key->value);
      if (it == resolved_.end()) continue;
      out.sets.push_back(MatrixSet{e.key->value, e.value->value, it->second});
    }
    if (out.sets.size() != sets->value->entries.size()) return std::nullopt;
    return out;
  }

 private:
  struct Parsed {
    MatrixExpr expr;
    const YamlNode* node = nullptr;
  };

  void ReadVars(const YamlEntry& vars, MatrixConfig& out) {
    if (vars.value->is_null()) return;
    if (!vars.value->is_map()) {
      sink_.Error(vars.value->pos, "matrix.vars: expected a map of short name -> model id");
      return;
    }
    for (const YamlEntry& v : vars.value->entries) {
      const std::string& name = v.key->value;
      if (!IsVarName(name)) {
        sink_.Error(v.key->pos,
                    "matrix.vars: \"" + name + "\" must be 1 to 32 letters, digits, '-' or '.'");
        continue;
      }
      if (!v.value->is_scalar()) {
        sink_.Error(v.value->pos, "matrix.vars." + name + ": expected a model id");
        continue;
      }
      const ModelConfig* model = config_.FindModel(v.value->value);
      if (model == nullptr) {
        sink_.Error(v.value->pos,
                    "matrix.vars." + name + ": unknown model \"" + v.value->value + "\"");
        continue;
      }
      out.vars[name] = model->id;
    }
    vars_ = out.vars;
  }

  void ReadCosts(const YamlEntry& costs, MatrixConfig& out) {
    if (costs.value->is_null()) return;
    if (!costs.value->is_map()) {
      sink_.Error(costs.value->pos, "matrix.evict_costs: expected a map of model -> cost");
      return;
    }
    for (const YamlEntry& c : costs.value->entries) {
      const std::string& name = c.key->value;
      std::optional<std::string> model = ModelOf(name);
      if (!model) {
        sink_.Error(c.key->pos, "matrix.evict_costs: unknown var or model \"" + name + "\"");
        continue;
      }
      nlohmann::json value = c.value->is_scalar() ? ScalarToJson(*c.value) : nlohmann::json();
      std::optional<int64_t> cost;
      if (value.is_number_integer()) cost = value.get<int64_t>();
      if (!cost || *cost <= 0) {
        sink_.Error(c.value->pos, "matrix.evict_costs." + name +
                                      ": expected a positive integer, got \"" + c.value->value +
                                      "\"");
        continue;
      }
      out.evict_costs[*model] = *cost;
    }
  }

  void ParseSets(const YamlNode& sets) {
    for (const YamlEntry& e : sets.entries) {
      const std::string& name = e.key->value;
      if (!e.value->is_scalar()) {
        sink_.Error(e.value->pos, "matrix.sets." + name +
                                      ": expected an expression such as "
                                      "\"(a | b) & c\"");
        continue;
      }
      auto result = ParseMatrixExpr(e.value->value);
      if (auto* error = std::get_if<MatrixParseError>(&result)) {
        sink_.Error(At(*e.value, error->offset), "matrix.sets." + name + ": " + error->message);
        continue;
      }
      parsed_[name] = Parsed{std::get<MatrixExpr>(std::move(result)), e.value.get()};
    }
  }

  // Resolves the set `name` into `out`: vars and aliases become model ids, references are
  // inlined. False (after reporting) when a name is unknown or the references form a cycle.
  bool Resolve(const std::string& name, MatrixExpr& out) {
    if (auto done = resolved_.find(name); done != resolved_.end()) {
      out = done->second;
      return true;
    }
    const Parsed& set = parsed_.at(name);
    if (!visiting_.insert(name).second) return false;
    out = set.expr;
    const bool ok = ResolveNode(name, *set.node, out);
    visiting_.erase(name);
    return ok;
  }

  bool ResolveNode(const std::string& set, const YamlNode& node, MatrixExpr& e) {
    if (e.kind != MatrixExpr::Kind::kModel) {
      bool ok = true;
      for (MatrixExpr& child : e.children) ok = ResolveNode(set, node, child) && ok;
      return ok;
    }
    const std::string written = e.model;
    if (written[0] == '+') {
      const std::string ref = written.substr(1);
      if (parsed_.count(ref) == 0) {
        sink_.Error(node.Locate(written), "matrix.sets." + set + ": unknown set \"" + ref + "\"");
        return false;
      }
      if (visiting_.count(ref) != 0) {
        sink_.Error(node.Locate(written),
                    "matrix.sets." + set + ": \"" + written + "\" makes a cycle of references");
        return false;
      }
      return Resolve(ref, e);
    }
    std::optional<std::string> model = ModelOf(written);
    if (!model) {
      sink_.Error(node.Locate(written),
                  "matrix.sets." + set + ": unknown var or model \"" + written + "\"");
      return false;
    }
    e.model = *model;
    return true;
  }

  // A var (which shadows a model of the same name), a model id or an alias.
  std::optional<std::string> ModelOf(const std::string& name) const {
    if (auto v = vars_.find(name); v != vars_.end()) return v->second;
    if (const ModelConfig* m = config_.FindModel(name)) return m->id;
    return std::nullopt;
  }

  const Config& config_;
  DiagnosticSink& sink_;
  std::map<std::string, std::string> vars_;
  std::map<std::string, Parsed> parsed_;
  std::map<std::string, MatrixExpr> resolved_;
  std::set<std::string> visiting_;
};

}  // namespace

void LinkMatrix(const RawConfig& raw, Config& config, DiagnosticSink& sink) {
  if (!raw.matrix) return;
  config.matrix = MatrixLinker(config, sink).Link(*raw.matrix, raw.matrix_key);
}

void LinkPriority(const RawConfig& raw, Config& config, DiagnosticSink& sink) {
  for (const RawPriority& p : raw.priority) {
    const ModelConfig* model = config.FindModel(p.model);
    if (model == nullptr) {
      sink.Error(p.pos,
                 "routing.scheduler.settings.fifo.priority: unknown model \"" + p.model + "\"");
      continue;
    }
    config.models.at(model->id).priority = p.priority;
  }
}

}  // namespace swapd
