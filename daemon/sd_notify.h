// The systemd notify protocol, spoken directly instead of through libsystemd (man sd_notify,
// NOTES: the protocol is systemd's stable interface and it recommends reimplementing it rather
// than linking libsystemd). A notification is one datagram holding the state text, sent to the
// AF_UNIX socket that $NOTIFY_SOCKET names: a path when it starts with '/', an abstract socket
// when it starts with '@'. The watchdog settings come from $WATCHDOG_USEC and $WATCHDOG_PID.
// Thread safe: every call reads the environment afresh and uses its own socket.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string_view>

#include "base/status.h"

namespace swapd {

// Sends `state` (newline-separated assignments such as "READY=1\nSTATUS=serving") to
// $NOTIFY_SOCKET. Returns false when NOTIFY_SOCKET is unset or empty (nothing is sent), true once
// sent, and an error when the address is not a path or '@' name, or sending fails. Blocks while
// the receiver's queue is full, as sd_notify() does.
Result<bool> SdNotify(std::string_view state);

// The watchdog timeout the service manager set for process `self`: `watchdog_usec` when it is a
// positive decimal number of microseconds and `watchdog_pid` is null (unset) or names `self`;
// zero otherwise, malformed values included. This is sd_watchdog_enabled()'s rule, which keeps a
// child that inherited the variables from pinging its parent's watchdog. Pure; used by tests.
std::chrono::microseconds WatchdogTimeout(const char* watchdog_usec, const char* watchdog_pid,
                                          pid_t self);
// WatchdogTimeout() for this process and its environment.
std::chrono::microseconds SdWatchdogTimeout();

}  // namespace swapd
