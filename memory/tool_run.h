// Running a short-lived command-line tool (nvidia-smi and the like) and collecting its output,
// bounded in time: no shell, stdin from /dev/null, and a tool that does not finish in time is
// killed together with whatever it started. Used by the memory meters.
// Thread safe: each call spawns and reaps its own child (with posix_spawn, safe in a
// multithreaded process) and shares nothing. A call blocks for up to its timeout.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace swapd {

struct ToolRun {
  std::string out;      // stdout, read to its end (up to 16 MiB)
  std::string failure;  // empty when the tool exited with status 0, else "NAME: exit status 9: ..."
};

// The first executable regular file called `name` in $PATH's directories, as $PATH reads at this
// call; empty when there is none. Empty entries ("." by POSIX) are not searched.
std::string FindOnPath(const std::string& name);

// Runs `path args...` and waits for it to exit and close its output, or for `timeout` to pass. The
// tool leads a new process group; past the timeout that group is SIGKILLed. The tool is always
// reaped before this returns.
ToolRun RunTool(const std::string& path, const std::vector<std::string>& args,
                std::chrono::milliseconds timeout);

}  // namespace swapd
