// backend-driver: a tiny stand-in for swapd in the "no orphans" test (guardian_test.cpp). It starts
// one ProcessBackend running the fake llama-server with --spawn-grandchild, prints
// "backend <pid>" and "guardian <pid>" once the backend is ready, then waits to be killed.
// Usage: backend-driver FAKE_BACKEND_BINARY
#include <unistd.h>

#include <cstdio>

#include "backends/guardian.h"
#include "backends/process_backend.h"
#include "tests/backends/backend_test_util.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: backend-driver FAKE_BACKEND_BINARY\n");
    return 2;
  }
  swapd::Status guardian = swapd::Guardian::Start();
  if (!guardian.ok()) {
    std::fprintf(stderr, "%s\n", guardian.message().c_str());
    return 1;
  }
  swapd::ModelConfig model;
  model.id = "driven";
  const int port = swapd::backend_testing::FreeLoopbackPort();
  model.argv = {argv[1], "--port", std::to_string(port), "--spawn-grandchild", "--ignore-sigterm"};
  model.proxy = "http://127.0.0.1:" + std::to_string(port);
  swapd::Config config;
  config.health_check_timeout = std::chrono::seconds(60);
  swapd::ProcessBackend backend(model, config);
  swapd::Status started = backend.Start();
  if (!started.ok()) {
    std::fprintf(stderr, "%s\n", started.message().c_str());
    return 1;
  }
  std::printf("backend %d\nguardian %d\n", backend.Info().pid, swapd::Guardian::Pid());
  std::fflush(stdout);
  for (;;) ::pause();  // until SIGKILL
}
