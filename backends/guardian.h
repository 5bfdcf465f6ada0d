// Guardian: "no orphans, ever". The parent-death signal (PR_SET_PDEATHSIG) kills only a backend's
// direct child, but backends have children of their own (a wrapper script's llama-server, vLLM
// workers, `docker run`). The guardian is a tiny process forked from swapd that holds the read end
// of a socket from swapd; swapd sends "+PGID\n" when a backend's process group starts and "-PGID\n"
// when it is gone. When the socket reaches EOF -- swapd died, even by SIGKILL, since the kernel
// closes a dead process's descriptors -- the guardian SIGKILLs every registered process group and
// exits. It also ends the instance's contained runs (backends/containment.h): it SIGKILLs the
// cgroup swapd made for its runs (and removes it once empty), and every process whose environment
// carries this swapd's SWAPD_RUN marker, in rounds until a scan of /proc finds none. It
// deliberately has NO parent-death signal (that would kill it before it can act); EOF is its only
// trigger, and it cannot miss it. It runs in its own process group so terminal signals (Ctrl-C)
// meant for swapd do not reach it, with stdio on /dev/null and no other descriptor. Thread safe:
// all functions may be called from any thread.
#pragma once

#include <string>

#include "base/status.h"

namespace swapd {

class Guardian {
 public:
  // Forks the guardian if it does not run yet (or died: then the registered groups are sent
  // again). Idempotent. The Launcher calls it before every spawn; swapd may call it at start-up.
  static Status Start();
  // Registers / unregisters a process group to kill when swapd dies. No-ops for pgid <= 1.
  static void Watch(int pgid);
  static void Unwatch(int pgid);
  // The cgroup directory holding this swapd's runs (empty: none) and the SWAPD_RUN prefix of its
  // runs' processes, for the guardian to end when swapd dies. Kept across guardian restarts.
  static void Contain(const std::string& cgroup_dir, const std::string& marker_prefix);
  // The guardian's pid, 0 when it is not running (for tests and diagnostics).
  static int Pid();
};

}  // namespace swapd
