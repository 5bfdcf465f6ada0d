// Integration tests of the slot cache with the real swapd and fake backends that imitate
// llama-server's slots API: a conversation survives a swap (the first request after swap-in
// processes only its new tokens), a changed model definition does not restore, a failing or
// hanging save still lets the swap go on, the disk bound holds, and a model without ${SLOT_DIR}
// is left alone.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/http_wait.h"
#include "tests/support/swapd_process.h"

namespace swapd::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kPrompt = "one two three four five six seven eight nine ten";
constexpr const char* kFollowUp = "one two three four five six seven eight nine ten and three more";

std::string SlotModelYaml(const std::string& id, int port, const std::string& flags = "") {
  return FakeModelYaml(id, port, "--slot-save-path ${SLOT_DIR} " + flags);
}

// The fake's timings for one chat request: {prompt_n, cache_n}; {-1, -1} on failure.
std::pair<int, int> Chat(const std::string& url, const std::string& model,
                         const std::string& prompt) {
  HttpReply r = HttpPost(url, "/v1/chat/completions", ChatBody(model, false, 8, prompt),
                         "application/json", 60s);
  INFO(r.Describe());
  CHECK(r.status == 200);
  const json doc = json::parse(r.body, nullptr, false);
  if (!doc.is_object() || !doc.contains("timings")) return {-1, -1};
  return {doc["timings"]["prompt_n"].get<int>(), doc["timings"]["cache_n"].get<int>()};
}

// Regular files directly in `dir` (none when it does not exist).
std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file()) names.push_back(e.path().filename().string());
  }
  return names;
}

double Metric(const std::string& url, const std::string& series) {
  return MetricSample(HttpGet(url, "/metrics").body, series);
}

TEST_CASE("a conversation survives a swap: the slot is saved on swap-out and restored on swap-in",
          "[integration][slots]") {
  const int pa = FreeLoopbackPort(), pb = FreeLoopbackPort();
  auto swapd = StartSwapd("slotCacheDir: slots\nmodels:\n" + SlotModelYaml("sc-a", pa) +
                          FakeModelYaml("sc-b", pb));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  const std::string root = swapd.value().dir + "/slots";
  INFO(swapd.value().process->Output());

  REQUIRE(Chat(url, "sc-a", kPrompt) == std::make_pair(10, 0));
  REQUIRE(Chat(url, "sc-b", kPrompt) == std::make_pair(10, 0));  // swaps sc-a out
  const std::vector<std::string> saved = FilesIn(root + "/sc-a");
  REQUIRE(saved.size() == 1);
  CHECK_THAT(saved[0], Catch::EndsWith("-slot0.bin"));
  CHECK((fs::status(root + "/sc-a").permissions() & fs::perms::all) == fs::perms::owner_all);

  // Without the cache all 13 words would be processed again.
  CHECK(Chat(url, "sc-a", kFollowUp) == std::make_pair(3, 10));
  const std::string metrics = HttpGet(url, "/metrics").body;
  CHECK(MetricSample(metrics, "swapd_slot_saves_total{model=\"sc-a\"}") == 1);
  CHECK(MetricSample(metrics, "swapd_slot_restores_total{model=\"sc-a\"}") == 1);
  CHECK(MetricSample(metrics, "swapd_slot_restored_prompt_tokens_total{model=\"sc-a\"}") == 10);
  CHECK(MetricSample(metrics, "swapd_slot_unrestored_prompt_tokens_total{model=\"sc-a\"}") == 3);
  CHECK(MetricSample(metrics, "swapd_slot_saved_bytes_total{model=\"sc-a\"}") > 0);

  // sc-b has no ${SLOT_DIR}: no directory, nothing saved, its cache is lost in a swap as before.
  CHECK_FALSE(fs::exists(root + "/sc-b"));
  CHECK(Chat(url, "sc-b", kPrompt) == std::make_pair(10, 0));
  CHECK(Metric(url, "swapd_slot_saves_total{model=\"sc-b\"}") == 0);
}

TEST_CASE("a changed model definition does not restore an old slot cache", "[integration][slots]") {
  const int pa = FreeLoopbackPort(), pb = FreeLoopbackPort();
  const std::string before =
      "slotCacheDir: slots\nmodels:\n" + SlotModelYaml("sc-a", pa) + FakeModelYaml("sc-b", pb);
  auto swapd = StartSwapd(before);
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  const std::string dir = swapd.value().dir + "/slots/sc-a";
  INFO(swapd.value().process->Output());
  REQUIRE(Chat(url, "sc-a", kPrompt).first == 10);
  REQUIRE(Chat(url, "sc-b", kPrompt).first == 10);
  REQUIRE(FilesIn(dir).size() == 1);

  // A new context size: the old cache would not fit this model.
  const std::string after = "slotCacheDir: slots\nmodels:\n" +
                            SlotModelYaml("sc-a", pa, "--ctx-size 2048") +
                            FakeModelYaml("sc-b", pb);
  std::ofstream(swapd.value().config_path) << after;
  REQUIRE(HttpPost(url, "/api/config/reload", "").status == 200);
  CHECK(Chat(url, "sc-a", kFollowUp) == std::make_pair(13, 0));
  CHECK(FilesIn(dir).empty());  // the stale file went at the start
  CHECK(Metric(url, "swapd_slot_restores_total{model=\"sc-a\"}") == 0);
}

TEST_CASE("a save that fails or hangs costs only the cache: the swap goes on",
          "[integration][slots]") {
  const std::string flags =
      GENERATE(std::string("--slot-save-fail"), std::string("--slot-save-ms 120000"));
  const int pa = FreeLoopbackPort(), pb = FreeLoopbackPort();
  auto swapd = StartSwapd("slotCacheDir: slots\nslotCacheTimeout: 2\nmodels:\n" +
                          SlotModelYaml("sc-a", pa, flags) + FakeModelYaml("sc-b", pb));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  INFO(flags << "\n" << swapd.value().process->Output());
  REQUIRE(Chat(url, "sc-a", kPrompt).first == 10);
  // The hanging save is cut at slotCacheTimeout (2 s), long before the fake would finish it.
  CHECK(Chat(url, "sc-b", kPrompt).first == 10);
  CHECK(FilesIn(swapd.value().dir + "/slots/sc-a").empty());
  CHECK(PidsWithArg("--port " + std::to_string(pa)).empty());
  CHECK(Metric(url, "swapd_slot_save_failures_total{model=\"sc-a\"}") == 1);
  CHECK(Chat(url, "sc-a", kFollowUp) == std::make_pair(13, 0));
}

TEST_CASE("slotCacheMaxBytes bounds the files of all models, least recently used first",
          "[integration][slots]") {
  const int pa = FreeLoopbackPort(), pc = FreeLoopbackPort();
  // Each saved slot holds 18 tokens of about 1 KB: one file fits in 30000 bytes, two do not.
  const std::string big = "--slot-bytes-per-token 1000";
  auto swapd = StartSwapd("slotCacheDir: slots\nslotCacheMaxBytes: 30000\nmodels:\n" +
                          SlotModelYaml("sc-a", pa, big) + SlotModelYaml("sc-c", pc, big));
  REQUIRE(swapd.ok());
  const std::string url = swapd.value().base_url;
  const std::string root = swapd.value().dir + "/slots";
  INFO(swapd.value().process->Output());
  REQUIRE(Chat(url, "sc-a", kPrompt).first == 10);
  REQUIRE(Chat(url, "sc-c", kPrompt).first == 10);  // saves sc-a
  REQUIRE(FilesIn(root + "/sc-a").size() == 1);
  // Saving sc-c puts the cache over the bound: sc-a's older file goes, before sc-a could
  // restore it.
  CHECK(Chat(url, "sc-a", kFollowUp) == std::make_pair(13, 0));
  CHECK(FilesIn(root + "/sc-a").empty());
  const std::vector<std::string> kept = FilesIn(root + "/sc-c");
  REQUIRE(kept.size() == 1);
  CHECK(fs::file_size(root + "/sc-c/" + kept[0]) <= 30000);
  // And the other way round: saving sc-a's 21 tokens removes sc-c's file.
  CHECK(Chat(url, "sc-c", kFollowUp) == std::make_pair(13, 0));
  CHECK(FilesIn(root + "/sc-c").empty());
  CHECK(FilesIn(root + "/sc-a").size() == 1);
}

}  // namespace
}  // namespace swapd::testing
