// systemd service notifications (sd_notify): READY=1 once listening, STOPPING=1 on shutdown.
// Harmless when swapd does not run under systemd (NOTIFY_SOCKET unset) or was built without
// libsystemd. Thread safe.
#pragma once

#include <string>

namespace swapd {

void NotifyReady();
void NotifyStopping();

}  // namespace swapd
