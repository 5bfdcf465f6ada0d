#include "config/model_port.h"

#include <string>
#include <utility>
#include <vector>

#include "base/text.h"
#include "config/argv_split.h"
#include "config/macros.h"

namespace swapd {
namespace {

std::string WithPort(std::string text, const std::string& port) {
  ReplaceAll(text, "${PORT}", port);
  return text;
}

// `command` split into words as the loader split it. It split the same text with the configured
// port, and digits change no quoting: an error cannot happen here, but keeps `fallback` if it does.
std::vector<std::string> SplitOr(const std::string& command, std::vector<std::string> fallback) {
  if (TrimSpace(command).empty()) return {};
  auto argv = SplitCommand(command);
  return argv.ok() ? std::move(argv).value() : std::move(fallback);
}

}  // namespace

void ApplyPort(ModelConfig& model, int port) {
  if (!model.port_template) return;
  const PortTemplate& t = *model.port_template;
  const std::string text = std::to_string(port);
  model.argv = SplitOr(WithPort(t.cmd, text), std::move(model.argv));
  model.stop_argv = SplitOr(WithPort(t.cmd_stop, text), std::move(model.stop_argv));
  model.env.clear();
  for (const auto& [name, value] : t.env) {
    model.env.emplace_back(WithPort(name, text), WithPort(value, text));
  }
  model.proxy = WithPort(t.proxy, text);
  model.check_endpoint = WithPort(t.check_endpoint, text);
  model.port = port;
}

ModelConfig ModelForPort(ModelConfig model, int port) {
  ApplyPort(model, port);
  return model;
}

}  // namespace swapd
