// Leftovers: backend processes that outlived the swapd that started them (its guardian was killed
// too, or they come from a machine's crash-restarted service). They carry that swapd's markers
// (backends/containment.h), so swapd finds them at start: the ones of its own config are stopped
// (they hold ports and memory the new backends need), the others are reported and left alone.
// Every process gets a log line saying what was done. Thread safe (no state).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace swapd {

struct Leftover {
  int pid = 0;
  int owner_pid = 0;    // the swapd that started it (gone)
  std::string model;    // its SWAPD_MODEL
  std::string config;   // its SWAPD_CONFIG
  std::string command;  // its command line, arguments joined by spaces (cut after 200 bytes)
};

// Every marked process whose swapd is gone (not this one), ascending by pid.
std::vector<Leftover> FindLeftovers();

// Stops the leftovers of `config_path` (SIGTERM, then SIGKILL after `grace`) and reports the
// others; removes the empty cgroups that gone swapds left next to this one's. Returns how many
// processes it stopped.
int StopLeftovers(const std::string& config_path, std::chrono::milliseconds grace);

}  // namespace swapd
