#include "backends/backend.h"

#include "base/proxy_url.h"

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

std::string ProxyInUse(const ModelConfig& model, const BackendInfo& backend) {
  return backend.proxy.empty() ? model.proxy : backend.proxy;
}

int PortInUse(const ModelConfig& model, const BackendInfo& backend) {
  if (backend.port != 0) return backend.port;
  if (model.port != 0) return model.port;
  return ParseProxyUrl(ProxyInUse(model, backend)).port;
}

}  // namespace swapd
