// Ports that never collide, with the real swapd: a model whose cmd uses ${PORT} runs on the next
// free port when another program listens on its configured one (first try, and after a reload),
// and starts once more on a new port when its process exits saying the address is in use; a port
// written as a number in the config is left as written and still fails clearly when taken.
// /running, /api/models and the log say which port is in use.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/http_wait.h"
#include "tests/support/port_holder.h"
#include "tests/support/swapd_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// What /running says of `model`: {port, proxy, ...}; null when it is not listed.
json RunningEntry(const std::string& url, const std::string& model) {
  HttpReply r = HttpGet(url, "/running");
  if (r.status != 200) return nullptr;
  const json doc = json::parse(r.body);
  for (const auto& m : doc["running"]) {
    if (m["model"] == model) return m;
  }
  return nullptr;
}

// What /api/models says of `model`.
json ApiModel(const std::string& url, const std::string& model) {
  HttpReply r = HttpGet(url, "/api/models");
  if (r.status != 200) return nullptr;
  const json doc = json::parse(r.body);
  for (const auto& m : doc["models"]) {
    if (m["id"] == model) return m;
  }
  return nullptr;
}

std::string PortModelYaml(int start_port, const std::string& extra_models = "") {
  return "startPort: " + std::to_string(start_port) +
         "\nmodels:\n"
         "  \"port-m\":\n"
         "    cmd: " FAKE_BACKEND_BINARY " --port ${PORT} --model ${MODEL_ID}\n" +
         extra_models;
}

TEST_CASE("a ${PORT} taken by another listener: the model serves on another port, first try",
          "[integration][ports]") {
  const int start = FreeLoopbackPort();
  PortHolder other(start);
  REQUIRE(other.listening());
  auto swapd = StartSwapd(PortModelYaml(start));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  HttpReply r =
      HttpPost(url, "/v1/chat/completions", ChatBody("port-m", false), "application/json", 60s);
  INFO(r.Describe());
  CHECK(r.status == 200);

  const json running = RunningEntry(url, "port-m");
  INFO(running.dump());
  REQUIRE(running.is_object());
  const int port = running.value("port", 0);
  CHECK(port > start);
  CHECK(running["proxy"] == "http://localhost:" + std::to_string(port));
  const json api = ApiModel(url, "port-m");
  INFO(api.dump());
  CHECK(api["port"] == port);
  CHECK(api["proxy"] == running["proxy"]);
  CHECK(api["start_failures"] == 0);
  CHECK(api["starts"] == 1);
  CHECK_THAT(
      swapd.value().process->Output(),
      Catch::Contains("model port-m: port " + std::to_string(start) +
                      " is in use by another process, starting on port " + std::to_string(port)));

  // A reload that leaves the model unchanged keeps it on its port, and its requests follow.
  std::ofstream(swapd.value().config_path)
      << PortModelYaml(start, "  \"fixed-m\":\n    cmd: " FAKE_BACKEND_BINARY
                              " --port 9 --model fixed-m\n    proxy: http://127.0.0.1:9\n");
  HttpReply reload = HttpPost(url, "/api/config/reload", "", "application/json", 30s);
  INFO(reload.Describe());
  REQUIRE(reload.status == 200);
  HttpReply again =
      HttpPost(url, "/v1/chat/completions", ChatBody("port-m", false), "application/json", 60s);
  INFO(again.Describe());
  CHECK(again.status == 200);
  CHECK(RunningEntry(url, "port-m").value("port", 0) == port);
}

TEST_CASE("a backend that exits with address in use starts once more on a new port",
          "[integration][ports]") {
  TempDir dir("swapd-port");
  const std::string script = dir.Path("backend.sh");
  WriteBindFailsOnceScript(script, dir.Path("marker"), dir.Path("runs"), FAKE_BACKEND_BINARY);
  const int start = FreeLoopbackPort();
  auto swapd = StartSwapd("startPort: " + std::to_string(start) +
                          "\nmodels:\n  \"retry-m\":\n    cmd: /bin/sh " + script +
                          " ${PORT} ${MODEL_ID}\n");
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  HttpReply r =
      HttpPost(url, "/v1/chat/completions", ChatBody("retry-m", false), "application/json", 60s);
  INFO(r.Describe());
  CHECK(r.status == 200);
  const json running = RunningEntry(url, "retry-m");
  INFO(running.dump());
  REQUIRE(running.is_object());
  CHECK(running["state"] == "ready");
  CHECK(running.value("port", 0) != start);
  std::ifstream runs(dir.Path("runs"));
  int count = 0;
  for (std::string line; std::getline(runs, line);) ++count;
  CHECK(count == 2);
  CHECK_THAT(
      swapd.value().process->Output(),
      Catch::Contains("model retry-m: its process could not bind port " + std::to_string(start)) &&
          Catch::Contains("starting once more, on port"));
}

TEST_CASE("a fixed proxy port that is taken is left as written and fails clearly",
          "[integration][ports]") {
  const int port = FreeLoopbackPort();
  PortHolder other(port);
  REQUIRE(other.listening());
  auto swapd = StartSwapd("models:\n" + FakeModelYaml("fixed-m", port) +
                          FakeModelYaml("ok-m", FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(swapd.value().process->Output());

  HttpReply r =
      HttpPost(url, "/v1/chat/completions", ChatBody("fixed-m", false), "application/json", 60s);
  INFO(r.Describe());
  CHECK(r.status == 502);
  CHECK_THAT(ErrorMessage(r.body), Catch::Contains("port " + std::to_string(port)) &&
                                       Catch::Contains("already in use by another process"));
  const json api = ApiModel(url, "fixed-m");
  INFO(api.dump());
  CHECK(api["port"] == port);
  CHECK(api["state"] == "failed");
  HttpReply ok =
      HttpPost(url, "/v1/chat/completions", ChatBody("ok-m", false), "application/json", 60s);
  CHECK(ok.status == 200);
}

}  // namespace
}  // namespace swapd::testing
