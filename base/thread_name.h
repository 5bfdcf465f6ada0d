// Names the calling thread (at most 15 characters, the kernel's limit), so that `top -H` and
// `ps -L` tell swapd's background threads apart. Best effort.
//
// They keep the default priority: at nice 10 the activity writer fell behind a flood of small
// requests on 2 cores and its queue overflowed (measured: 13877 rows dropped in 5 s at 64
// connections, and the queued captures doubled swapd's memory).
#pragma once

#include <string_view>

namespace swapd {

void NameThisThread(std::string_view name);

}  // namespace swapd
