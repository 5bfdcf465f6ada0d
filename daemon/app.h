// App: the running service, from the command line to the exit code. Run() loads the
// configuration, makes the Service (daemon/service.h: every part, wired), binds, serves until a
// stop signal has drained the requests (daemon/shutdown.h), and stops. Composition only.
#pragma once

#include "daemon/cli.h"

namespace swapd {

class App {
 public:
  explicit App(Options options);
  // Blocks until swapd exits; returns the process exit code.
  int Run();

 private:
  Options options_;
};

}  // namespace swapd
