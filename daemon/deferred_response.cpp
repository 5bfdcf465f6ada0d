#include "daemon/deferred_response.h"

namespace swapd {
namespace {

thread_local Deferrer* current_deferrer = nullptr;

}  // namespace

Deferrer* CurrentDeferrer() { return current_deferrer; }

DeferrerScope::DeferrerScope(Deferrer* deferrer) : previous_(current_deferrer) {
  current_deferrer = deferrer;
}

DeferrerScope::~DeferrerScope() { current_deferrer = previous_; }

}  // namespace swapd
