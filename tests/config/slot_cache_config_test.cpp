// The slot cache's config: ${SLOT_DIR}, slotCacheDir (default and relative), slotCacheMaxBytes,
// slotCacheTimeout, and the key that decides whether a saved cache fits a model.
#include <catch2/catch.hpp>

#include "config/slot_cache_settings.h"
#include "tests/config/config_test_util.h"

namespace swapd::testing {
namespace {

const Env kHome = {{"HOME", "/home/u"}};

std::string SlotYaml(const std::string& a_cmd, const std::string& extra_top = "") {
  return extra_top + "models:\n  a:\n    cmd: " + a_cmd + "\n  b:\n    cmd: srv --port ${PORT}\n";
}

TEST_CASE("${SLOT_DIR} expands to the model's directory under slotCacheDir", "[unit][config]") {
  LoadResult r = Parse(
      SlotYaml("srv --port ${PORT} --slot-save-path ${SLOT_DIR}", "slotCacheDir: /var/cache/x\n"),
      kHome);
  const ModelConfig& a = Model(r, "a");
  CHECK(a.slot_dir == "/var/cache/x/a");
  CHECK(a.argv ==
        std::vector<std::string>{"srv", "--port", "5800", "--slot-save-path", "/var/cache/x/a"});
  CHECK(a.slot_key.size() == 16);
  CHECK(Model(r, "b").slot_dir.empty());  // no ${SLOT_DIR}: no slot cache
  CHECK(r.config->slot_cache_max_bytes == uint64_t{16} << 30);
  CHECK(r.config->slot_cache_timeout == std::chrono::seconds(30));
}

TEST_CASE("slotCacheDir defaults from the environment and is relative to the config file",
          "[unit][config]") {
  const std::string yaml = SlotYaml("srv --slot-save-path ${SLOT_DIR} --port ${PORT}");
  CHECK(Model(Parse(yaml, {{"CACHE_DIRECTORY", "/var/cache/swapd:/x"}, {"HOME", "/h"}}), "a")
            .slot_dir == "/var/cache/swapd/slots/a");
  CHECK(Model(Parse(yaml, {{"XDG_CACHE_HOME", "/xdg"}, {"HOME", "/h"}}), "a").slot_dir ==
        "/xdg/swapd/slots/a");
  CHECK(Model(Parse(yaml, kHome), "a").slot_dir == "/home/u/.cache/swapd/slots/a");
  CHECK(Model(Parse(yaml, {}), "a").slot_dir == "/var/cache/swapd/slots/a");

  LoadResult r = ParseConfig("slotCacheDir: cache/slots\n" + yaml, "/etc/swapd/config.yaml",
                             OptionsWithEnv(kHome));
  CHECK(Model(r, "a").slot_dir == "/etc/swapd/cache/slots/a");
}

TEST_CASE("the slot key follows cmd and env, not the port or the directory", "[unit][config]") {
  auto key = [](const std::string& yaml) { return Model(Parse(yaml, kHome), "a").slot_key; };
  const std::string base = key(SlotYaml("srv -c 4096 --port ${PORT} --slot-save-path ${SLOT_DIR}"));
  // Another model sorted before "a" moves a's port; the cache stays valid.
  CHECK(key("models:\n  0first:\n    cmd: srv --port ${PORT}\n" +
            SlotYaml("srv -c 4096 --port ${PORT} --slot-save-path ${SLOT_DIR}").substr(8)) == base);
  CHECK(key(SlotYaml("srv -c 4096 --port ${PORT} --slot-save-path ${SLOT_DIR}",
                     "slotCacheDir: /elsewhere\n")) == base);
  CHECK(key(SlotYaml("srv -c 8192 --port ${PORT} --slot-save-path ${SLOT_DIR}")) != base);
  CHECK(key(SlotYaml("srv -c 4096 --port ${PORT} --slot-save-path ${SLOT_DIR}\n    env: "
                     "[\"CUDA_VISIBLE_DEVICES=\"]")) != base);
}

TEST_CASE("slot cache settings are checked with their position", "[unit][config]") {
  const std::string models = SlotYaml("srv --port ${PORT}");
  LoadResult r = Parse("slotCacheMaxBytes: 20GiB\nslotCacheTimeout: 5\n" + models, kHome);
  REQUIRE(r.ok());
  CHECK(r.config->slot_cache_max_bytes == uint64_t{20} << 30);
  CHECK(r.config->slot_cache_timeout == std::chrono::seconds(5));
  CHECK(Parse("slotCacheMaxBytes: 1500\n" + models, kHome).config->slot_cache_max_bytes == 1500);

  LoadResult bad = Parse("slotCacheMaxBytes: lots\nslotCacheTimeout: 0\n" + models, kHome);
  CHECK_FALSE(bad.ok());
  CHECK(At(FindDiag(bad, "slotCacheMaxBytes: must be a size")) == "1:20");
  CHECK(At(FindDiag(bad, "slotCacheTimeout: must be at least 1 second")) == "2:19");

  LoadResult stray =
      Parse("models:\n  a:\n    cmd: srv --port ${PORT}\n    env: [\"DIR=${SLOT_DIR}\"]\n", kHome);
  CHECK(At(FindDiag(stray, "env uses ${SLOT_DIR} but cmd does not")) == "4:16");
  LoadResult reserved =
      Parse("macros:\n  SLOT_DIR: /x\nmodels:\n  a:\n    cmd: srv --port ${PORT}\n", kHome);
  CHECK(At(FindDiag(reserved, "macro \"SLOT_DIR\": the name is reserved")) == "2:3");
}

TEST_CASE("slot directory names and byte sizes", "[unit][config]") {
  CHECK(SlotDirFor("/c", "qwen3-4b_Q4.gguf") == "/c/qwen3-4b_Q4.gguf");
  const std::string odd = SlotDirFor("/c", "org/model:q4");
  CHECK(odd.rfind("/c/org_model_q4-", 0) == 0);
  CHECK(odd != SlotDirFor("/c", "org_model:q4"));
  CHECK(SlotDirFor("/c", "..") != "/c/..");
  CHECK(ParseByteSize("512MiB") == uint64_t{512} << 20);
  CHECK(ParseByteSize("1.5GB") == uint64_t{1500000000});
  CHECK(ParseByteSize("10G") == uint64_t{10} << 30);
  CHECK(ParseByteSize("") == std::nullopt);
  CHECK(ParseByteSize("-5") == std::nullopt);
  CHECK(ParseByteSize("5 parsecs") == std::nullopt);
  CHECK(StableHash({"a", "b"}) != StableHash({"ab"}));
}

}  // namespace
}  // namespace swapd::testing
