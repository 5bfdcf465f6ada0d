// What /proc says about processes, for containment (backends/containment.h): the environment a
// process was started with and its start time. A marker in the environment is inherited by every
// descendant that does not clear it, whichever session or group it moves to. Stateless; thread
// safe. Processes of other users whose /proc files cannot be read are skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace swapd::proc {

// The whole text of a /proc (or /sys) file; empty when it cannot be read (e.g. the process is
// gone). read(2), since a read failing midway (ESRCH) must simply end the text.
std::string ReadText(const std::string& path);

// The value of `name` in the environment `pid` was started with (/proc/PID/environ).
std::optional<std::string> EnvValue(int pid, const std::string& name);
// The same in the text of an environ file ("K=V\0K=V\0...").
std::optional<std::string> EnvValueIn(const std::string& environ, const std::string& name);

// Every live process (not a zombie) whose environment holds `name` with the value `value` (or,
// with `prefix_match`, a value that starts with it), ascending. One walk of /proc.
std::vector<int> PidsWithEnv(const std::string& name, const std::string& value,
                             bool prefix_match = false);

// The start time of `pid` in clock ticks after boot (field 22 of /proc/PID/stat): with the pid, it
// names one process for good, since a pid is reused only by a later process. nullopt when gone or
// a zombie (dead, not yet reaped).
std::optional<uint64_t> StartTime(int pid);

}  // namespace swapd::proc
