// Residency end to end: the real swapd with fake backends. A model's minResidency keeps it loaded
// against the group rules (503 + Retry-After, or a wait that ends with the residency), and
// `prefetch: true` reads its model files into the page cache before its process starts.
#include <fcntl.h>
#include <httplib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "memory/memory_meter.h"
#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::string ModelState(const SwapdInstance& swapd, const std::string& id) {
  HttpReply reply = HttpGet(swapd.base_url, "/api/models");
  REQUIRE(reply.status == 200);
  const json api = json::parse(reply.body);
  for (const json& m : api["models"]) {
    if (m["id"] == id) return m["state"].get<std::string>();
  }
  FAIL("no model " << id << " in /api/models");
  return "";
}

// Two models of the default group, which swaps them; `a` has a minimum residency.
std::string TwoModels(int residency_seconds, const std::string& top = "") {
  return top + "models:\n" +
         FakeModelYaml("a", FreeLoopbackPort(), "",
                       "    minResidency: " + std::to_string(residency_seconds) + "\n") +
         FakeModelYaml("b", FreeLoopbackPort());
}

TEST_CASE("minResidency: a swap that would stop the model early gets 503 + Retry-After",
          "[integration][memory][residency]") {
  auto swapd = StartSwapd(TwoModels(600));
  REQUIRE(swapd.ok());
  const SwapdInstance& s = swapd.value();
  HttpReply a = HttpPost(s.base_url, "/v1/chat/completions", ChatBody("a", false));
  INFO(a.Describe());
  REQUIRE(a.status == 200);

  httplib::Client client(s.base_url);
  client.set_read_timeout(30, 0);
  auto b = client.Post("/v1/chat/completions", ChatBody("b", false), "application/json");
  REQUIRE(b);
  CHECK(b->status == 503);
  const int retry_after = std::stoi(b->get_header_value("Retry-After"));
  CHECK(retry_after > 500);  // the rest of the 600 s residency, not a guess
  CHECK(retry_after <= 600);
  const json doc = json::parse(b->body);
  CHECK_THAT(doc["error"]["message"].get<std::string>(),
             Catch::Contains("\"a\"") && Catch::Contains("minResidency: 600 s"));
  CHECK(ModelState(s, "a") == "ready");
  CHECK(ModelState(s, "b") == "stopped");
  // /api/models shows the setting.
  const json api = json::parse(HttpGet(s.base_url, "/api/models").body);
  for (const json& m : api["models"]) {
    if (m["id"] == "a") CHECK(m["memory"]["min_residency_seconds"] == 600);
  }
}

TEST_CASE("minResidency with onProtected: wait: the swap happens once the residency ends",
          "[integration][memory][residency]") {
  auto swapd = StartSwapd(TwoModels(2, "memory:\n  onProtected: wait\n"));
  REQUIRE(swapd.ok());
  const SwapdInstance& s = swapd.value();
  HttpReply a = HttpPost(s.base_url, "/v1/chat/completions", ChatBody("a", false));
  INFO(a.Describe());
  REQUIRE(a.status == 200);
  HttpReply b =
      HttpPost(s.base_url, "/v1/chat/completions", ChatBody("b", false), "application/json", 60s);
  INFO(b.Describe());
  CHECK(b.status == 200);
  CHECK(ModelState(s, "a") == "stopped");
  const std::string logs = HttpGet(s.base_url, "/logs").body;
  CHECK_THAT(logs, Catch::Contains("minResidency: 2 s") && Catch::Contains("(waiting)"));
  CHECK_THAT(logs, Catch::Contains("model a: stopping (group)"));
}

TEST_CASE("prefetch: a model's files are read into the page cache before its process starts",
          "[integration][memory][prefetch]") {
  TempDir dir;
  const std::string weights = dir.Path("weights.gguf");
  {
    const int fd = ::open(weights.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    const std::string chunk(1 << 20, 'w');
    for (int i = 0; i < 48; ++i) REQUIRE(::write(fd, chunk.data(), chunk.size()) == 1 << 20);
    REQUIRE(::fdatasync(fd) == 0);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  const int64_t cached_before = FilesInPageCache({weights}).cached;
  const std::string yaml =
      "models:\n" +
      FakeModelYaml("a", FreeLoopbackPort(), "--lora " + weights, "    prefetch: true\n") +
      FakeModelYaml("b", FreeLoopbackPort(), "", "    prefetch: true\n");
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const SwapdInstance& s = swapd.value();
  HttpReply a = HttpPost(s.base_url, "/v1/chat/completions", ChatBody("a", false));
  INFO(a.Describe());
  REQUIRE(a.status == 200);
  // In the cache now (the kernel may already have reclaimed a few pages on a busy machine: the
  // log below says what the prefetch itself read).
  CHECK(FilesInPageCache({weights}).cached >= 40 << 20);

  const std::string logs = HttpGet(s.base_url, "/logs").body;
  INFO(logs);
  const size_t prefetched = logs.find("model a: prefetched ");
  const size_t started = logs.find("model a: started pid");
  REQUIRE(prefetched != std::string::npos);
  REQUIRE(started != std::string::npos);
  CHECK(prefetched < started);
  CHECK_THAT(logs, Catch::Contains(" of 48.0 MiB ("));
  if (cached_before < (24 << 20)) CHECK_THAT(logs, Catch::Contains("B/s"));  // read from disk
  // A model whose cmd names no model file that exists starts anyway, with a warning.
  HttpReply b = HttpPost(s.base_url, "/v1/chat/completions", ChatBody("b", false));
  INFO(b.Describe());
  CHECK(b.status == 200);
  CHECK_THAT(HttpGet(s.base_url, "/logs").body,
             Catch::Contains("model b: prefetch: true, but no model file its cmd names exists"));
}

}  // namespace
}  // namespace swapd::testing
