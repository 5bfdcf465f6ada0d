// Tees swapd's own log (the default spdlog logger) into a LogHub, tagged "swapd", so that GET /logs
// shows it beside the backends' output. The logger's other sinks (stderr) are left as they are.
// Call once, while setting up logging, before other threads log.
#pragma once

#include <memory>

#include "observe/log_hub.h"

namespace swapd {

void TeeDefaultLoggerInto(std::shared_ptr<LogHub> hub);

}  // namespace swapd
