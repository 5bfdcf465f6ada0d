#include "backends/backend.h"

namespace swapd {

const char* ToString(BackendState state) {
  switch (state) {
    case BackendState::kStopped:
      return "stopped";
    case BackendState::kStarting:
      return "starting";
    case BackendState::kReady:
      return "ready";
    case BackendState::kStopping:
      return "stopping";
    case BackendState::kFailed:
      return "failed";
  }
  return "unknown";
}

}  // namespace swapd
