// Launcher: starts child processes for swapd -- backends and cmdStop commands. The seam between
// swapd and the OS's process creation (one real implementation, DefaultLauncher(); tests may pass
// another). Every child is started the same way:
//  - argv is executed directly, never through a shell; a bare argv[0] such as `llama-server` is
//    looked up in the CHILD's PATH (its merged environment), as execvp would;
//  - environment: swapd's own, then the request's pairs in order (later wins; K= is present-empty);
//  - its own process group (pgid == pid), so a stop can signal the backend and all its children;
//  - parent-death signal SIGKILL, so it dies with swapd even when swapd is SIGKILLed, and the
//    group is registered with the Guardian (backends/guardian.h) for the children it may have;
//  - its run is contained (backends/containment.h): it joins its run's cgroup before exec where
//    swapd makes them, and its environment carries the run's markers (SWAPD_RUN, SWAPD_MODEL,
//    SWAPD_CONFIG), so every descendant is found whatever session or group it moves to;
//  - stdin is /dev/null, stdout and stderr go to one pipe (ChildProcess::output_fd()), and it
//    inherits no other descriptor of swapd (listening sockets, other backends' pipes);
//  - signal mask empty and dispositions default, whatever swapd's threads had.
// Thread safe: Spawn may be called from any thread; the real launcher forks on ONE long-lived
// thread, because the parent-death signal fires when the thread that forked the child exits.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/child_process.h"
#include "backends/spawn_env.h"
#include "base/status.h"

namespace swapd {

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up in the child's PATH
  EnvPairs env;                   // appended to swapd's environment; later wins
  std::string model_id = {};      // the model the child belongs to (its SWAPD_MODEL); may be empty
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  // Starts the child. Errors: kBackendFailed when the program is not found or cannot be executed
  // (the message names it and says why), kInternal for OS failures (fork, pipe).
  virtual Result<std::unique_ptr<ChildProcess>> Spawn(const SpawnRequest& request) = 0;
};

// The process-wide real launcher (fork and exec through Boost.Process, on a spawner thread that
// is never stopped). Never null; lives until the process ends.
Launcher& DefaultLauncher();

}  // namespace swapd
