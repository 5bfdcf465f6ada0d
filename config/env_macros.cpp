#include "config/env_macros.h"

#include <cstdlib>
#include <set>

namespace swapd {
namespace {

constexpr std::string_view kEnvOpen = "${env.";

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

std::string Expand(const YamlNode& node, const std::string& text, const GetEnvFunction& getenv,
                   DiagnosticSink& sink) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t at = text.find(kEnvOpen, i);
    if (at == std::string::npos) break;
    size_t name_begin = at + kEnvOpen.size();
    size_t j = name_begin;
    if (j < text.size() && IsNameStart(text[j])) {
      while (j < text.size() && IsNameChar(text[j])) ++j;
    }
    if (j == name_begin || j >= text.size() || text[j] != '}') {
      out.append(text, i, name_begin - i);  // not a well-formed reference: keep the text
      i = name_begin;
      continue;
    }
    std::string name = text.substr(name_begin, j - name_begin);
    out.append(text, i, at - i);
    if (auto value = getenv(name)) {
      out += *value;
    } else {
      std::string ref = text.substr(at, j + 1 - at);
      sink.Error(node.Locate(ref),
                 "environment variable " + name + " is not set (used as " + ref + ")");
      out += ref;
    }
    i = j + 1;
  }
  out.append(text, std::min(i, text.size()), std::string::npos);
  return out;
}

void Walk(YamlNode& node, const GetEnvFunction& getenv, DiagnosticSink& sink,
          std::set<const YamlNode*>& done) {
  if (!done.insert(&node).second) return;  // an alias: already expanded
  switch (node.kind) {
    case YamlNode::Kind::kNull:
      return;
    case YamlNode::Kind::kScalar:
      if (node.value.find(kEnvOpen) != std::string::npos) {
        node.value = Expand(node, node.value, getenv, sink);
      }
      return;
    case YamlNode::Kind::kSequence:
      for (auto& item : node.items) Walk(*item, getenv, sink, done);
      return;
    case YamlNode::Kind::kMap:
      for (auto& e : node.entries) {
        Walk(*e.key, getenv, sink, done);
        Walk(*e.value, getenv, sink, done);
      }
      return;
  }
}

}  // namespace

void SubstituteEnvMacros(YamlNode& root, const GetEnvFunction& getenv, DiagnosticSink& sink) {
  std::set<const YamlNode*> done;
  Walk(root, getenv ? getenv : GetEnvFunction(ProcessEnv), sink, done);
}

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

}  // namespace swapd
