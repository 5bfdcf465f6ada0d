// Reads process figures from /proc for the metrics: the resident memory of a whole process group
// (a backend and any children it spawned), and swapd's own resident memory and open descriptors.
// Thread safe (each call reads /proc afresh; no state).
#pragma once

#include <cstdint>

namespace swapd {

// Sum of the resident set sizes (VmRSS) of every process whose process group is `pgid`, in bytes.
// 0 when there is none.
int64_t ProcessGroupResidentBytes(int pgid);

int64_t SelfResidentBytes();
int SelfOpenDescriptors();

}  // namespace swapd
