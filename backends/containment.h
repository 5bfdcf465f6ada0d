// Containment: every process a backend's command starts, directly or not, belongs to that run until
// it exits, whatever it does (setsid, setpgid, double fork, daemonizing), so that a stop, and
// swapd's death by any signal, ends all of them, and the memory meter counts all of them.
// Two mechanisms (docs/operations.md, "Containment", has the trade-offs):
//  - cgroup v2, where swapd may create groups under its own (root, or a systemd unit with
//    Delegate=yes): swapd makes one group per swapd ("swapd-PID.START") and, in it, one per run;
//    the child joins its run's group before exec. No process leaves a group it cannot write, and
//    cgroup.kill ends a whole tree at once.
//  - markers otherwise: every run's environment carries SWAPD_RUN (and SWAPD_MODEL, SWAPD_CONFIG),
//    inherited by every descendant that does not clear its environment; /proc finds them.
// Both carry the markers, so leftovers of an earlier swapd are found either way
// (backends/leftovers.h). The Guardian (backends/guardian.h) kills the instance's group and every
// marked process when swapd dies.
// Thread safe: every function may be called from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/spawn_env.h"
#include "base/status.h"

namespace swapd {

enum class ContainmentMode {
  kAuto,    // cgroup v2 where swapd can create groups, else markers
  kCgroup,  // cgroup v2 or nothing: a backend does not start without it
  kMarker,  // markers only (what a machine without cgroup v2 gets)
};
std::optional<ContainmentMode> ParseContainmentMode(std::string_view text);

// The environment variables that mark a run's processes.
inline constexpr char kRunEnv[] = "SWAPD_RUN";        // "SWAPDPID.STARTTIME.SEQUENCE"
inline constexpr char kModelEnv[] = "SWAPD_MODEL";    // the model id
inline constexpr char kConfigEnv[] = "SWAPD_CONFIG";  // swapd's config file (absolute)

// Where the processes of one run are.
struct RunScope {
  std::string cgroup;  // the run's cgroup directory; empty with markers only
  std::string marker;  // the run's SWAPD_RUN value
};

// Every live process of the run, ascending: the members of its cgroup, or the processes marked
// with its SWAPD_RUN.
std::vector<int> ScopePids(const RunScope& scope);

// One run: made by the Launcher before a spawn, owned by the ChildProcess. Destroying it SIGKILLs
// whatever is left of the run, waits for it (up to 5 s) and removes the run's cgroup.
class Cage {
 public:
  Cage(RunScope scope, int join_fd);
  ~Cage();
  Cage(const Cage&) = delete;
  Cage& operator=(const Cage&) = delete;

  const std::shared_ptr<const RunScope>& scope() const { return scope_; }
  // What the child's environment gets: SWAPD_RUN, SWAPD_MODEL (when there is one), SWAPD_CONFIG.
  EnvPairs MarkerEnv(const std::string& model_id) const;
  // The run's cgroup.procs open for writing (the child writes "0" to join before exec); -1 with
  // markers only. CloseJoinFd() once the child has started.
  int join_fd() const { return join_fd_; }
  void CloseJoinFd();

  std::vector<int> Pids() const { return ScopePids(*scope_); }
  bool Alive() const;
  // Sends `sig` to every process of the run but those of process group `skip_pgid` (which the
  // caller signalled already: a second SIGTERM makes llama-server quit at once); returns how many
  // got it.
  int Signal(int sig, int skip_pgid = 0) const;
  // SIGKILLs every process of the run until none is left or `limit` passes; true when none is.
  bool KillAll(std::chrono::milliseconds limit) const;

 private:
  const std::shared_ptr<const RunScope> scope_;
  int join_fd_ = -1;
};

namespace containment {

// Chooses the mechanism; call once before the first spawn (the default is kAuto with no config
// path). `config_path` (absolute) goes into SWAPD_CONFIG, so that leftovers of this config are
// recognised later.
void Configure(ContainmentMode mode, const std::string& config_path);

// "cgroup v2 (/sys/fs/cgroup/.../swapd-12.345)" or "markers (why no cgroup)"; decides the
// mechanism if nothing spawned yet.
std::string Describe();

// A new run for a spawn of `model_id` (empty for commands that belong to no model). Errors only in
// kCgroup mode when no cgroup can be made.
Result<std::unique_ptr<Cage>> NewCage(const std::string& model_id);

// A child could not join its cgroup (errno `err`): markers from now on (auto mode), and the next
// NewCage says so. Returns false in kCgroup mode (nothing to fall back to).
bool CgroupJoinFailed(int err);

// This swapd's SWAPD_RUN prefix, "PID.STARTTIME.".
std::string InstanceMarker();

// The directory of this swapd's own group of runs; empty with markers.
std::string InstanceCgroup();

// The config path given to Configure().
std::string ConfigPath();

}  // namespace containment
}  // namespace swapd
