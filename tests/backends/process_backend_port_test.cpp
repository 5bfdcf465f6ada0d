// ProcessBackend with a model whose cmd uses ${PORT}: the process runs on the configured port
// when it is free, on the next free one when another program holds it, and once more on a new
// port when it exits saying the address is in use. Real processes (the fake llama-server and a
// /bin/sh script) on loopback ports; each test has its own PortAllocator.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "backends/process_backend.h"
#include "config/loader.h"
#include "tests/backends/backend_test_util.h"
#include "tests/support/port_holder.h"
#include "tests/support/temp_dir.h"

namespace swapd {
namespace {

using backend_testing::FreeLoopbackPort;
using testing::PortHolder;
using testing::TempDir;

// The one model of `models_yaml` (indented under `models:`), with ${PORT} from `start_port`.
ModelConfig PortModel(int start_port, const std::string& models_yaml) {
  LoadResult r =
      ParseConfig("startPort: " + std::to_string(start_port) + "\nmodels:\n" + models_yaml);
  INFO(r.ErrorText());
  REQUIRE(r.ok());
  REQUIRE(r.config->models.size() == 1);
  return r.config->models.begin()->second;
}

int CountLines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST_CASE("ProcessBackend: a ${PORT} taken by another program: the model runs on the next free",
          "[integration][backend][ports]") {
  const int start = FreeLoopbackPort();
  PortHolder other(start);
  REQUIRE(other.listening());
  ModelConfig model = PortModel(
      start, "  m:\n    cmd: " FAKE_BACKEND_BINARY " --port ${PORT} --model ${MODEL_ID}\n");
  PortAllocator ports;
  ProcessBackendOptions options;
  options.ports = &ports;
  Config config;
  ProcessBackend backend(model, config, options);

  Status s = backend.Start();
  INFO(s.message() << "\n" << backend.LogTail(20));
  REQUIRE(s.ok());
  const BackendInfo info = backend.Info();
  CHECK(info.port > start);
  CHECK(info.proxy == "http://localhost:" + std::to_string(info.port));
  CHECK(ports.Holder(info.port) == "m");
  CHECK_THAT(backend.LogTail(20),
             Catch::Contains("listening on http://127.0.0.1:" + std::to_string(info.port)));

  backend.Stop();
  CHECK(backend.Info().port == 0);
  CHECK(ports.Holder(info.port).empty());  // given back with the process
}

TEST_CASE("ProcessBackend: a process that exits with address in use starts once more elsewhere",
          "[integration][backend][ports]") {
  TempDir dir("swapd-port");
  const std::string script = dir.Path("backend.sh");
  testing::WriteBindFailsOnceScript(script, dir.Path("marker"), dir.Path("runs"),
                                    FAKE_BACKEND_BINARY);
  const int start = FreeLoopbackPort();
  ModelConfig model = PortModel(start, "  m:\n    cmd: /bin/sh " + script + " ${PORT} m\n");
  PortAllocator ports;
  ProcessBackendOptions options;
  options.ports = &ports;
  Config config;
  ProcessBackend backend(model, config, options);

  Status s = backend.Start();
  INFO(s.message() << "\n" << backend.LogTail(20));
  REQUIRE(s.ok());
  const BackendInfo info = backend.Info();
  CHECK(info.state == BackendState::kReady);
  CHECK(info.port != start);  // the port it could not bind is not tried again at once
  CHECK_FALSE(info.exit_code.has_value());
  CHECK(CountLines(dir.Path("runs")) == 2);
  backend.Stop();
}

TEST_CASE("ProcessBackend: address in use twice: the start fails with the backend's words",
          "[integration][backend][ports]") {
  TempDir dir("swapd-port");
  const std::string runs = dir.Path("runs");
  const std::string script =
      dir.Write("backend.sh", "#!/bin/sh\necho run >> '" + runs +
                                  "'\necho 'bind: Address already in use' >&2\nexit 1\n");
  ModelConfig model =
      PortModel(FreeLoopbackPort(), "  m:\n    cmd: /bin/sh " + script + " ${PORT}\n");
  PortAllocator ports;
  ProcessBackendOptions options;
  options.ports = &ports;
  Config config;
  ProcessBackend backend(model, config, options);

  Status s = backend.Start();
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("exited during start-up") &&
                              Catch::Contains("Address already in use"));
  CHECK(backend.Info().state == BackendState::kFailed);
  CHECK(CountLines(runs) == 2);  // once more, not again and again
}

}  // namespace
}  // namespace swapd
