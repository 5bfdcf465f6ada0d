// The cgroup v2 operations that contain a backend's process tree (backends/containment.h): where
// this process's cgroup is, and what is in a group of it. A process cannot leave a cgroup without
// the rights to write another one, whatever it does (setsid, double fork, daemonizing), and every
// child it makes starts in its group. Stateless; thread safe.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace swapd::cgroup {

// The directory of this process's cgroup in the cgroup v2 hierarchy, e.g.
// "/sys/fs/cgroup/system.slice/swapd.service". An error says why there is none (no cgroup2 mount:
// a cgroup v1 machine; the mount does not show this process's group).
Result<std::string> OwnDirectory();

// The same from the texts of /proc/self/mountinfo and /proc/self/cgroup (used by tests).
Result<std::string> OwnDirectoryFrom(const std::string& mountinfo, const std::string& cgroup);

// The processes of group `dir` itself (cgroup.procs), ascending. Empty once none is left.
std::vector<int> Procs(const std::string& dir);

// True while `dir` or a group below it holds a process (cgroup.events "populated 1"); false once
// it is empty or gone.
bool Populated(const std::string& dir);

// SIGKILLs every process of `dir` and the groups below it: one write to cgroup.kill (Linux 5.14
// and later), else each pid of cgroup.procs. Returns false when neither could be written.
bool KillAll(const std::string& dir);

}  // namespace swapd::cgroup
