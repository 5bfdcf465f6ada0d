// STUB: replaced by the scheduler implementation.
#include "backends/router.h"

namespace swapd {

class RouterImpl {};

Lease::Lease(Lease&&) noexcept = default;
Lease& Lease::operator=(Lease&&) noexcept = default;
Lease::~Lease() = default;
void Lease::Release() {}

Router::Router(std::shared_ptr<const Config>, BackendFactory) {}
Router::~Router() = default;
Result<Lease> Router::Acquire(const std::string&, std::chrono::steady_clock::time_point,
                              std::function<bool()>) {
  return Status::Error(ErrorCode::kInternal, "not implemented");
}
void Router::Unload(const std::string&) {}
void Router::Preload() {}
std::vector<ModelSnapshot> Router::Snapshot() const { return {}; }
void Router::Shutdown() {}
std::string Router::LogTail(const std::string&, size_t) const { return {}; }

}  // namespace swapd
