// Reads process figures from /proc for the metrics: the members of a process group or of a
// backend's whole run (a backend and any process it started) and their resident memory, and swapd's
// own resident memory and open descriptors. Thread safe (each call reads /proc afresh; no state).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace swapd {

// The pids of every process whose process group is `pgid`, ascending. Empty when there is none.
std::vector<int> ProcessGroupPids(int pgid);
// The same for several groups in one walk of /proc: group -> its pids (empty when none).
std::map<int, std::vector<int>> ProcessGroupsPids(const std::vector<int>& pgids);

// Sum of the resident set sizes (VmRSS) of every process whose process group is `pgid`, in bytes.
// 0 when there is none.
int64_t ProcessGroupResidentBytes(int pgid);

// Every process of a running backend, ascending: its process group and every process of its run
// (backends/containment.h), which includes those that left the group. Empty when none runs.
std::vector<int> BackendPids(const BackendInfo& backend);
// Sum of the resident set sizes (VmRSS) of `pids`, in bytes; processes gone meanwhile count 0.
int64_t ResidentBytesOf(const std::vector<int>& pids);

int64_t SelfResidentBytes();
int SelfOpenDescriptors();

}  // namespace swapd
