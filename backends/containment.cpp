#include "backends/containment.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "backends/cgroup.h"
#include "backends/guardian.h"
#include "backends/proc_scan.h"

namespace swapd {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kCagePollEvery = std::chrono::milliseconds(10);
constexpr auto kCageKillLimit = std::chrono::seconds(5);

struct State {
  std::mutex mu;
  ContainmentMode mode = ContainmentMode::kAuto;  // Guarded by mu.
  std::string config_path;                        // Guarded by mu.
  bool decided = false;                           // Guarded by mu.
  std::string instance_marker;                    // "PID.START."; Guarded by mu.
  std::string instance_cgroup;                    // empty with markers; Guarded by mu.
  std::string why_markers;                        // Guarded by mu.
  uint64_t runs = 0;                              // Guarded by mu.
};

State& TheState() {
  static auto* state = new State();  // never destroyed: cages may outlive static destruction
  return *state;
}

// A model id as a cgroup name: letters, digits, '.', '-' and '_' only, not too long.
std::string GroupName(uint64_t run, const std::string& model_id) {
  std::string name = std::to_string(run) + "-";
  for (char c : model_id.substr(0, 64)) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '-' || c == '_';
    name += plain ? c : '_';
  }
  if (model_id.empty()) name += "command";
  return name;
}

// Requires s.mu. Decides the mechanism once: makes this swapd's group of runs if it can.
void DecideLocked(State& s) {
  if (s.decided) return;
  s.decided = true;
  const int pid = static_cast<int>(::getpid());
  s.instance_marker =
      std::to_string(pid) + "." + std::to_string(proc::StartTime(pid).value_or(0)) + ".";
  if (s.mode == ContainmentMode::kMarker) {
    s.why_markers = "--containment marker";
  } else if (Result<std::string> own = cgroup::OwnDirectory(); !own.ok()) {
    s.why_markers = own.status().message();
  } else {
    std::string dir =
        own.value() + "/swapd-" + s.instance_marker.substr(0, s.instance_marker.size() - 1);
    if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) {
      s.instance_cgroup = std::move(dir);
    } else {
      s.why_markers = "cannot create a cgroup in " + own.value() + ": " + std::strerror(errno);
    }
  }
  Guardian::Contain(s.instance_cgroup, s.instance_marker);
  // The guardian also removes the instance's group when swapd exits, even before any spawn.
  if (!s.instance_cgroup.empty()) {
    if (Status started = Guardian::Start(); !started.ok()) spdlog::warn("{}", started.message());
  }
  spdlog::info("containment of backend process trees: {}",
               s.instance_cgroup.empty() ? "markers (" + s.why_markers + ")"
                                         : "cgroup v2 (" + s.instance_cgroup + ")");
}

}  // namespace

std::optional<ContainmentMode> ParseContainmentMode(std::string_view text) {
  if (text == "auto") return ContainmentMode::kAuto;
  if (text == "cgroup") return ContainmentMode::kCgroup;
  if (text == "marker") return ContainmentMode::kMarker;
  return std::nullopt;
}

std::vector<int> ScopePids(const RunScope& scope) {
  if (!scope.cgroup.empty()) return cgroup::Procs(scope.cgroup);
  if (scope.marker.empty()) return {};
  return proc::PidsWithEnv(kRunEnv, scope.marker);
}

Cage::Cage(RunScope scope, int join_fd)
    : scope_(std::make_shared<const RunScope>(std::move(scope))), join_fd_(join_fd) {}

Cage::~Cage() {
  CloseJoinFd();
  if (Alive() && !KillAll(kCageKillLimit)) {
    spdlog::warn("run {}: processes {} survived SIGKILL for {} s", scope_->marker,
                 fmt::join(Pids(), ","), kCageKillLimit.count());
  }
  if (!scope_->cgroup.empty() && ::rmdir(scope_->cgroup.c_str()) != 0 && errno != ENOENT) {
    spdlog::warn("cannot remove cgroup {}: {}", scope_->cgroup, std::strerror(errno));
  }
}

EnvPairs Cage::MarkerEnv(const std::string& model_id) const {
  // Always all three, empty when unknown: a value inherited from swapd's own environment would
  // name another swapd's config or model.
  return {
      {kRunEnv, scope_->marker}, {kModelEnv, model_id}, {kConfigEnv, containment::ConfigPath()}};
}

void Cage::CloseJoinFd() {
  if (join_fd_ >= 0) ::close(join_fd_);
  join_fd_ = -1;
}

bool Cage::Alive() const {
  if (!scope_->cgroup.empty()) return cgroup::Populated(scope_->cgroup);
  return !Pids().empty();
}

int Cage::Signal(int sig, int skip_pgid) const {
  int count = 0;
  for (int pid : Pids()) {
    if (skip_pgid > 0 && ::getpgid(pid) == skip_pgid) continue;
    count += ::kill(pid, sig) == 0 ? 1 : 0;
  }
  return count;
}

bool Cage::KillAll(std::chrono::milliseconds limit) const {
  const auto deadline = Clock::now() + limit;
  for (;;) {
    if (!scope_->cgroup.empty()) {
      cgroup::KillAll(scope_->cgroup);
    } else {
      Signal(SIGKILL);  // a process forked meanwhile is marked too: the next round gets it
    }
    if (!Alive()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kCagePollEvery);
  }
}

namespace containment {

void Configure(ContainmentMode mode, const std::string& config_path) {
  State& s = TheState();
  std::lock_guard<std::mutex> lock(s.mu);
  s.mode = mode;
  s.config_path = config_path;
  if (s.decided && s.runs == 0) {  // nothing contained yet: decide again with this mode
    if (!s.instance_cgroup.empty()) ::rmdir(s.instance_cgroup.c_str());
    s.instance_cgroup.clear();
    s.why_markers.clear();
    s.decided = false;
  }
  DecideLocked(s);
}

std::string Describe() {
  State& s = TheState();
  std::lock_guard<std::mutex> lock(s.mu);
  DecideLocked(s);
  return s.instance_cgroup.empty() ? "markers (" + s.why_markers + ")"
                                   : "cgroup v2 (" + s.instance_cgroup + ")";
}

Result<std::unique_ptr<Cage>> NewCage(const std::string& model_id) {
  State& s = TheState();
  std::lock_guard<std::mutex> lock(s.mu);
  DecideLocked(s);
  RunScope scope;
  const uint64_t run = ++s.runs;
  scope.marker = s.instance_marker + std::to_string(run);
  int join_fd = -1;
  if (!s.instance_cgroup.empty()) {
    std::string dir = s.instance_cgroup + "/" + GroupName(run, model_id);
    if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) {
      join_fd = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
      if (join_fd >= 0) {
        scope.cgroup = std::move(dir);
      } else {
        spdlog::warn("cannot open {}/cgroup.procs: {}; this run is contained by markers", dir,
                     std::strerror(errno));
        ::rmdir(dir.c_str());
      }
    } else {
      spdlog::warn("cannot create cgroup {}: {}; this run is contained by markers", dir,
                   std::strerror(errno));
    }
  }
  if (s.mode == ContainmentMode::kCgroup && scope.cgroup.empty()) {
    return Status::Error(ErrorCode::kBackendFailed,
                         "--containment cgroup: no cgroup v2 group for the backend (" +
                             (s.why_markers.empty() ? "see the log" : s.why_markers) + ")");
  }
  return std::make_unique<Cage>(std::move(scope), join_fd);
}

bool CgroupJoinFailed(int err) {
  State& s = TheState();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.mode == ContainmentMode::kCgroup) return false;
  if (!s.instance_cgroup.empty()) {
    s.why_markers = std::string("a backend could not join its cgroup: ") + std::strerror(err);
    spdlog::warn("containment of backend process trees: markers from now on ({})", s.why_markers);
    s.instance_cgroup.clear();  // runs already in it keep their groups; the Guardian still knows
  }
  return true;
}

std::string InstanceMarker() {
  State& s = TheState();
  std::lock_guard<std::mutex> lock(s.mu);
  DecideLocked(s);
  return s.instance_marker;
}

std::string InstanceCgroup() {
  State& s = TheState();
  std::lock_guard<std::mutex> lock(s.mu);
  DecideLocked(s);
  return s.instance_cgroup;
}

std::string ConfigPath() {
  State& s = TheState();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.config_path;
}

}  // namespace containment
}  // namespace swapd
