#include "daemon/service_notify.h"

#ifdef SWAPD_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace swapd {
namespace {

void Notify([[maybe_unused]] const std::string& message) {
#ifdef SWAPD_HAVE_SYSTEMD
  sd_notify(0, message.c_str());
#endif
}

}  // namespace

void NotifyReady() { Notify("READY=1\nSTATUS=serving"); }
void NotifyStopping() { Notify("STOPPING=1"); }

}  // namespace swapd
