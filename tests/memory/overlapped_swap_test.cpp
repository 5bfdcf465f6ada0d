// Overlapped swaps end to end: the real swapd, two fake backends in one swap group under a RAM
// budget, the outgoing one slow to stop (it ignores SIGTERM until unloadTimeout kills it). With
// memory.overlapSwaps the incoming model starts and answers while the outgoing one still stops;
// with it off, it starts only once the other has stopped. Either way nothing is left behind.
#include <catch2/catch.hpp>
#include <optional>

#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;

std::string PairYaml(bool overlap, int port_a, int port_b) {
  return std::string("memory: {ram: 4GiB, sampleInterval: 0.2, overlapSwaps: ") +
         (overlap ? "true" : "false") +
         "}\n"
         "groups:\n"
         "  pair:\n"
         "    swap: true\n"
         "    members: [slow-stop, incoming]\n"
         "models:\n" +
         FakeModelYaml("slow-stop", port_a, "--ignore-sigterm",
                       "    memory: {ram: 200MiB}\n    unloadTimeout: 3\n") +
         FakeModelYaml("incoming", port_b, "", "    memory: {ram: 200MiB}\n");
}

// The index of the first line of swapd's log holding `text`.
std::optional<size_t> LineWith(const std::vector<std::string>& lines, const std::string& text) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(text) != std::string::npos) return i;
  }
  return std::nullopt;
}

void RunPair(bool overlap) {
  auto swapd = StartSwapd(PairYaml(overlap, FreeLoopbackPort(), FreeLoopbackPort()));
  REQUIRE(swapd.ok());
  Subprocess& log = *swapd.value().process;
  REQUIRE(ChatStatus(swapd.value().base_url, "slow-stop") == 200);
  REQUIRE(ChatStatus(swapd.value().base_url, "incoming") == 200);
  // The slow model's stop ends only when unloadTimeout kills it.
  const bool stop_logged = log.WaitForLineMatching(
                                  [](std::string_view line) {
                                    return line.find("model slow-stop: stopped") != line.npos;
                                  },
                                  30s)
                               .has_value();
  INFO("swapd's log:\n" << log.Output());
  REQUIRE(stop_logged);
  const std::vector<std::string> lines = log.Lines();
  const auto stopping = LineWith(lines, "model slow-stop: stopping (group)");
  const auto stopped = LineWith(lines, "model slow-stop: stopped");
  const auto starting = LineWith(lines, "model incoming: starting");
  const auto ready = LineWith(lines, "model incoming: ready in");
  REQUIRE(stopping);
  REQUIRE(stopped);
  REQUIRE(starting);
  REQUIRE(ready);
  if (overlap) {
    CHECK(*stopping < *starting);
    CHECK(*starting < *stopped);  // started while the other still stopped
  } else {
    CHECK(*stopped < *starting);
  }
  CHECK(NoneWithArgWithin("--model slow-stop ", 10s));
}

TEST_CASE("an overlapped swap starts the incoming model while the outgoing one stops",
          "[integration][memory][overlap]") {
  RunPair(/*overlap=*/true);
}

TEST_CASE("with overlapSwaps: false the incoming model starts once the outgoing one stopped",
          "[integration][memory][overlap]") {
  RunPair(/*overlap=*/false);
}

}  // namespace
}  // namespace swapd::testing
