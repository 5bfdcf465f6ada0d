// STUB: replaced by the service implementation.
#include "daemon/app.h"

namespace swapd {

App::App(Options options) : options_(std::move(options)) {}
int App::Run() { return 1; }

}  // namespace swapd
