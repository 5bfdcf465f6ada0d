// swapd: a library plus this main(), which only wires things together.
#include <iostream>

#include "check/check_command.h"
#include "daemon/app.h"
#include "daemon/cli.h"
#include "daemon/reload.h"
#include "scoreboard/bench_command.h"

int main(int argc, char** argv) {
  using swapd::Options;
  auto parsed = swapd::ParseCommandLine({argv + 1, argv + argc});
  if (!parsed.error.empty()) {
    std::cerr << "swapd: " << parsed.error << " (see swapd --help)\n";
    return 2;
  }
  switch (parsed.options.command) {
    case Options::Command::kHelp:
      std::cout << swapd::UsageText();
      return 0;
    case Options::Command::kVersion:
      std::cout << swapd::VersionText() << "\n";
      return 0;
    case Options::Command::kCheck:
      return swapd::RunCheck(swapd::LoadOptionsFor(parsed.options), parsed.options.json, std::cout,
                             std::cerr);
    case Options::Command::kBench:
      return swapd::RunBench(parsed.options.bench, std::cout, std::cerr);
    case Options::Command::kServe:
      break;
  }
  return swapd::App(parsed.options).Run();
}
