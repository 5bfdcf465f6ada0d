// The model's cmdStop: `${PID}` substitution and running the command to completion (no shell) with
// its output passed on line by line, within a deadline.
// Stateless functions; RunStopCommand blocks the calling thread until the command is done.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "backends/launcher.h"
#include "backends/log_ring.h"
#include "base/status.h"

namespace swapd {

// Replaces every `${PID}` inside every word of `argv` with `pid`.
std::vector<std::string> SubstitutePid(const std::vector<std::string>& argv, int pid);

// Runs `request` and passes its output lines to `on_line` until it exits or `deadline` passes (then
// its process group is SIGKILLed). Ok when it exited with code 0; otherwise an error saying how it
// ended (e.g. "exit code 1", "not found", "still running after the grace period: killed").
Status RunStopCommand(Launcher& launcher, const SpawnRequest& request,
                      std::chrono::steady_clock::time_point deadline,
                      const LineSplitter::LineFn& on_line);

}  // namespace swapd
