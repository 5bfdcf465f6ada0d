#include "backends/run_port.h"

#include <spdlog/spdlog.h>

#include <string>
#include <utility>

#include "backends/port_check.h"
#include "config/model_port.h"

namespace swapd {

Result<PortLease> PlaceRun(ModelConfig& model, const RunPortRequest& request,
                           PortAllocator& ports) {
  if (model.argv.empty()) return PortLease();  // nothing to spawn; the launcher says so
  if (!PortIsChosen(model)) {
    if (Status free = CheckProxyPortFree(model.id, model.proxy); !free.ok()) return free;
    return PortLease();
  }
  auto leased = ports.Acquire(model.id, request.configured_port, request.avoid);
  if (!leased.ok()) {
    return Status::Error(ErrorCode::kBackendFailed,
                         ModelLabel(model.id) + ": " + leased.status().message());
  }
  PortLease lease = std::move(leased).value();
  if (request.again) {
    spdlog::warn(
        "model {}: its process could not bind port {} (its output says the address is in use): "
        "starting once more, on port {}",
        model.id, model.port, lease.port());
  } else if (!lease.skipped().empty()) {
    const SkippedPort& first = lease.skipped().front();
    spdlog::warn("model {}: port {} is {}{}, starting on port {}", model.id, first.port, first.why,
                 lease.skipped().size() > 1 ? " (and the next ones too)" : "", lease.port());
  }
  ApplyPort(model, lease.port());
  return lease;
}

}  // namespace swapd
