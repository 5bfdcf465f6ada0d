// STUB: replaced by the CLI implementation.
#include "daemon/cli.h"

namespace swapd {

ParsedCommandLine ParseCommandLine(const std::vector<std::string>& args) {
  ParsedCommandLine r;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "check") r.options.command = Options::Command::kCheck;
    if (args[i] == "--config" && i + 1 < args.size()) r.options.config_path = args[++i];
    if (args[i] == "--listen" && i + 1 < args.size()) r.options.listen = args[++i];
  }
  return r;
}
std::string UsageText() { return "usage: swapd [--config FILE]\n"; }
std::string VersionText() { return std::string("swapd ") + SWAPD_VERSION; }

}  // namespace swapd
