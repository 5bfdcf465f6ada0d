// Starts tests/fake_backend's fake-llama-server as a Subprocess on an ephemeral loopback port and
// learns the port from its "listening on http://127.0.0.1:PORT" line. For tests that talk to a
// backend directly; swapd's own tests let swapd start the fake through their config.
// Thread safe in the way Subprocess is.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tests/support/child_process.h"

namespace swapd::testing {

struct FakeBackend {
  std::unique_ptr<Subprocess> process;
  int port = 0;
  std::string base_url;  // "http://127.0.0.1:PORT"
};

// Runs FAKE_BACKEND_BINARY --port 0 <args> with `env` added to the test's environment, and waits
// up to `timeout` for it to listen. Fails with the backend's output when it does not.
Result<FakeBackend> StartFakeBackend(const std::vector<std::string>& args,
                                     const std::vector<std::string>& env = {},
                                     std::chrono::milliseconds timeout = std::chrono::seconds(10));

// Waits up to `timeout` for the fake to finish loading ("main: model loaded": /health answers 200
// and the model routes serve; before that they answer 503, as llama-server's do).
bool WaitUntilLoaded(const FakeBackend& backend,
                     std::chrono::milliseconds timeout = std::chrono::seconds(20));

// The port of a "listening on http://HOST:PORT" line, or -1.
int ListeningPort(std::string_view line);

}  // namespace swapd::testing
