#include "tests/support/fake_backend_process.h"

#include <charconv>

namespace swapd::testing {

int ListeningPort(std::string_view line) {
  constexpr std::string_view kPrefix = "listening on http://";
  if (line.substr(0, kPrefix.size()) != kPrefix) return -1;
  const size_t colon = line.rfind(':');
  if (colon == std::string_view::npos || colon < kPrefix.size()) return -1;
  int port = -1;
  const char* begin = line.data() + colon + 1;
  const char* end = line.data() + line.size();
  auto [ptr, ec] = std::from_chars(begin, end, port);
  if (ec != std::errc() || ptr != end || port <= 0 || port > 65535) return -1;
  return port;
}

Result<FakeBackend> StartFakeBackend(const std::vector<std::string>& args,
                                     const std::vector<std::string>& env,
                                     std::chrono::milliseconds timeout) {
  SubprocessSpec spec;
  spec.argv = {FAKE_BACKEND_BINARY, "--port", "0"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = env;
  Result<std::unique_ptr<Subprocess>> started = Subprocess::Start(std::move(spec));
  if (!started.ok()) return started.status();
  FakeBackend backend;
  backend.process = std::move(started).value();
  std::optional<std::string> line = backend.process->WaitForLine("listening on http://", timeout);
  if (!line || ListeningPort(*line) < 0) {
    return Status::Error(
        ErrorCode::kTimeout,
        "fake-llama-server did not announce its port; output:\n" + backend.process->Output());
  }
  backend.port = ListeningPort(*line);
  backend.base_url = "http://127.0.0.1:" + std::to_string(backend.port);
  return backend;
}

bool WaitUntilLoaded(const FakeBackend& backend, std::chrono::milliseconds timeout) {
  return backend.process->WaitForLine("main: model loaded", timeout).has_value();
}

}  // namespace swapd::testing
