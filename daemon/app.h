// App: the running service. Composes the config, the Router and the HTTP server; owns signals
// (SIGTERM/SIGINT shutdown, SIGHUP reload) and shutdown. Run() blocks until swapd exits.
#pragma once

#include "daemon/cli.h"

namespace swapd {

class App {
 public:
  explicit App(Options options);
  // Returns the process exit code.
  int Run();

 private:
  Options options_;
};

}  // namespace swapd
