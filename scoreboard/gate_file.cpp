// Gate files (gates.h's LoadGateFile, ParseGates). The one file of scoreboard/ that includes
// yaml-cpp: scoreboard/ depends on base/ only, so it does not share config/'s YAML document tree;
// yaml-cpp's node marks give the positions, and its exceptions end here.
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "scoreboard/gates.h"
#include "scoreboard/json_schema.h"

namespace swapd {
namespace {

using nlohmann::json;

class GateFileReader {
 public:
  explicit GateFileReader(std::string file) : file_(std::move(file)) {}

  Result<std::vector<Gate>> Read(std::string_view text) {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
      Error(e.mark, e.msg);
      return Finish({});
    }
    const YAML::Node& top = root;
    // Node's operator= writes through to the node it refers to; reset() re-points it.
    YAML::Node list;
    if (!top.IsMap()) list.reset(root);
    if (top.IsMap()) {
      for (const auto& entry : top) {
        const std::string key = entry.first.Scalar();
        if (key == "gates") {
          list.reset(entry.second);
        } else {
          Error(entry.first.Mark(), "unknown key \"" + key + "\" (a gate file holds `gates:`)");
        }
      }
    }
    std::vector<Gate> gates;
    if (list.IsSequence() && list.size() > 0) {
      for (const YAML::Node& item : list) gates.push_back(ReadGate(item));
    } else {
      Error(list.Mark().is_null() ? top.Mark() : list.Mark(),
            "expected a list of gates {name, prompt, schema | regex, max_tokens}, or `gates:` "
            "holding one");
    }
    std::map<std::string, std::string> seen;  // name -> where
    for (const Gate& gate : gates) {
      if (gate.name.empty()) continue;
      auto [it, fresh] = seen.emplace(gate.name, gate.source);
      if (!fresh)
        problems_.push_back(gate.source + ": gate \"" + gate.name + "\" is defined twice");
    }
    return Finish(std::move(gates));
  }

 private:
  Gate ReadGate(const YAML::Node& node) {
    Gate gate;
    gate.source = file_ + ":" + std::to_string(node.Mark().line + 1);
    if (!node.IsMap()) {
      Error(node.Mark(), "a gate must be a map {name, prompt, schema | regex, max_tokens}");
      return gate;
    }
    gate.name = ScalarField(node, "name");
    const std::string label = gate.name.empty() ? "gate" : "gate \"" + gate.name + "\"";
    std::set<std::string> keys;
    for (const auto& entry : node) {
      const std::string key = entry.first.Scalar();
      if (!keys.insert(key).second)
        Error(entry.first.Mark(), label + ": key \"" + key + "\" twice");
      if (key == "name") continue;  // read above, to name the gate in every message
      if (key == "prompt") {
        gate.prompt = ScalarField(node, "prompt");
      } else if (key == "regex") {
        gate.regex = ScalarField(node, "regex");
        ReadRegex(gate, entry.second, label);
      } else if (key == "schema") {
        ReadSchema(gate, entry.second, label);
      } else if (key == "max_tokens") {
        ReadMaxTokens(gate, entry.second, label);
      } else {
        Error(entry.first.Mark(),
              label + ": unknown key \"" + key + "\" (name, prompt, schema, regex, max_tokens)");
      }
    }
    if (gate.name.empty()) Error(node.Mark(), "gate without a name");
    if (gate.prompt.empty()) Error(node.Mark(), label + ": no prompt");
    if (node["schema"] && node["regex"]) {
      Error(node["regex"].Mark(), label + ": has both schema and regex; give one");
    }
    if (node["schema"]) gate.check = Gate::Check::kJsonSchema;
    if (node["regex"]) gate.check = Gate::Check::kRegex;
    return gate;
  }

  // A string field's text; an error when it is not a scalar.
  std::string ScalarField(const YAML::Node& node, const char* key) {
    const YAML::Node value = node[key];
    if (!value) return "";
    if (!value.IsScalar()) {
      Error(value.Mark(), std::string(key) + " must be text");
      return "";
    }
    return value.Scalar();
  }

  void ReadRegex(Gate& gate, const YAML::Node& value, const std::string& label) {
    if (!value.IsScalar()) return;  // reported by ScalarField
    try {
      std::regex(gate.regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      Error(value.Mark(), label + ": bad regex /" + gate.regex + "/: " + e.what());
    }
  }

  void ReadMaxTokens(Gate& gate, const YAML::Node& value, const std::string& label) {
    const std::string text = value.IsScalar() ? value.Scalar() : "";
    int n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n <= 0) {
      Error(value.Mark(), label + ": max_tokens must be a whole number > 0");
      return;
    }
    gate.max_tokens = n;
  }

  // `schema:` written as YAML (a map) or as JSON text (a string).
  void ReadSchema(Gate& gate, const YAML::Node& value, const std::string& label) {
    marks_.clear();
    if (value.IsScalar()) {
      try {
        gate.schema = json::parse(value.Scalar());
      } catch (const json::parse_error& e) {
        Error(value.Mark(), label + ": schema is not valid JSON: " + e.what());
        return;
      }
    } else {
      gate.schema = ToJson(value, "");
    }
    for (const SchemaProblem& p : CheckSchema(gate.schema)) {
      auto mark = marks_.find(p.pointer);
      const std::string where = p.pointer.empty() ? "" : " at " + p.pointer;
      Error(mark == marks_.end() ? value.Mark() : mark->second,
            label + ": schema" + where + ": " + p.message);
    }
  }

  // YAML to JSON, remembering where each JSON pointer was written (a map entry: its key).
  json ToJson(const YAML::Node& node, const std::string& pointer) {
    marks_.emplace(pointer, node.Mark());
    if (node.IsMap()) {
      json out = json::object();
      for (const auto& entry : node) {
        const std::string key = entry.first.Scalar();
        std::string escaped;
        for (char c : key) escaped += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
        const std::string child = pointer + "/" + escaped;
        out[key] = ToJson(entry.second, child);
        marks_[child] = entry.first.Mark();
      }
      return out;
    }
    if (node.IsSequence()) {
      json out = json::array();
      for (const YAML::Node& item : node) {
        out.push_back(ToJson(item, pointer + "/" + std::to_string(out.size())));
      }
      return out;
    }
    if (!node.IsScalar()) return nullptr;
    return ScalarToJson(node);
  }

  // A plain (unquoted) scalar is typed as YAML 1.2's core schema would; a quoted one is text.
  static json ScalarToJson(const YAML::Node& node) {
    const std::string& s = node.Scalar();
    if (node.Tag() != "?") return s;
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
    int64_t i = 0;
    if (auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
        ec == std::errc() && end == s.data() + s.size()) {
      return i;
    }
    if (s.find_first_not_of("0123456789+-.eE") == std::string::npos) {
      char* end = nullptr;
      const double d = std::strtod(s.c_str(), &end);
      if (end == s.c_str() + s.size()) return d;
    }
    return s;
  }

  void Error(const YAML::Mark& mark, const std::string& message) {
    if (mark.is_null()) {
      problems_.push_back(file_ + ": " + message);
    } else {
      problems_.push_back(file_ + ":" + std::to_string(mark.line + 1) + ":" +
                          std::to_string(mark.column + 1) + ": " + message);
    }
  }

  Result<std::vector<Gate>> Finish(std::vector<Gate> gates) {
    if (problems_.empty()) return gates;
    std::string message;
    for (const std::string& p : problems_) message += (message.empty() ? "" : "\n") + p;
    return Status::Error(ErrorCode::kInvalidArgument, std::move(message));
  }

  const std::string file_;
  std::vector<std::string> problems_;
  std::map<std::string, YAML::Mark> marks_;  // of the schema being read
};

}  // namespace

Result<std::vector<Gate>> ParseGates(std::string_view text, const std::string& name) {
  return GateFileReader(name).Read(text);
}

Result<std::vector<Gate>> LoadGateFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::Error(ErrorCode::kInvalidArgument,
                         path + ": cannot read the gate file: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseGates(text.str(), path);
}

}  // namespace swapd
