// fake-llama-server: imitates llama.cpp's llama-server for swapd's tests and README demo.
// Run with --help for the flags.
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tests/fake_backend/lifecycle.h"
#include "tests/fake_backend/log.h"
#include "tests/fake_backend/options.h"
#include "tests/fake_backend/server.h"

int main(int argc, char** argv) {
  using namespace fake_backend;
  ParseResult parsed = ParseOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (parsed.show_help) {
    std::fputs(Usage().c_str(), stdout);
    return 0;
  }
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "%s\n%s", parsed.error.c_str(), Usage().c_str());
    return 1;
  }
  const Options& options = parsed.options;
  InstallSignalHandlers(options);
  if (int pid = SpawnGrandchild(options); pid > 0) {
    LogLine("fake: spawned grandchild pid " + std::to_string(pid));
  }
  AllocateMemory(options);

  FakeServer server(options);
  const int port = server.Bind();
  if (port < 0) {
    LogLine("main: couldn't bind HTTP server socket, hostname: " + options.host +
            ", port: " + std::to_string(options.port));
    return 1;
  }
  LogLine("listening on http://" + options.host + ":" + std::to_string(port));
  std::thread loader([&] { LoadModel(options, [&] { server.SetReady(); }); });
  loader.detach();
  server.Serve();  // returns only if the server fails; signals end the process with _exit
  return 1;
}
