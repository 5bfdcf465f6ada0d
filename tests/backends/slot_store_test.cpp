// SlotStore on a real temporary directory: what Prepare keeps and removes, the atomic commit of
// a partial save, and the size bound that removes the least recently used files first.
#include "backends/slot_store.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

namespace swapd::testing {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/swapd-slots-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string path;
};

void Write(const std::string& path, size_t bytes) {
  std::ofstream(path, std::ios::binary) << std::string(bytes, 'x');
}

// Sets a file's last use `age` seconds back.
void Age(const std::string& path, int age) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::seconds(age));
}

TEST_CASE("SlotStore::Prepare creates the directory 0700 and keeps only this key's files",
          "[unit][slots]") {
  TempDir tmp;
  SlotStore store(SlotStore::Settings{});
  const std::string dir = tmp.path + "/deep/er/m";
  auto none = store.Prepare(dir, "k1");
  REQUIRE(none.ok());
  CHECK(none.value().empty());
  CHECK((fs::status(dir).permissions() & fs::perms::all) == fs::perms::owner_all);
  CHECK((fs::status(tmp.path + "/deep").permissions() & fs::perms::all) == fs::perms::owner_all);

  Write(dir + "/" + SlotStore::FileName("k1", 0), 10);
  Write(dir + "/" + SlotStore::FileName("k1", 3), 20);
  Write(dir + "/" + SlotStore::FileName("k0", 0), 10);     // another definition
  Write(dir + "/" + SlotStore::PartialName("k1", 1), 10);  // a save that never finished
  Write(dir + "/notes.txt", 5);                            // not ours
  auto files = store.Prepare(dir, "k1");
  REQUIRE(files.ok());
  REQUIRE(files.value().size() == 2);
  CHECK(files.value()[0].slot == 0);
  CHECK(files.value()[1].slot == 3);
  CHECK(files.value()[1].bytes == 20);
  CHECK_FALSE(fs::exists(dir + "/" + SlotStore::FileName("k0", 0)));
  CHECK_FALSE(fs::exists(dir + "/" + SlotStore::PartialName("k1", 1)));
  CHECK(fs::exists(dir + "/notes.txt"));

  Write(tmp.path + "/file", 1);
  CHECK_FALSE(store.Prepare(tmp.path + "/file", "k1").ok());
}

TEST_CASE("SlotStore::Commit renames a partial save into place and bounds the total size",
          "[unit][slots]") {
  TempDir tmp;
  SlotStore store(SlotStore::Settings{250, std::chrono::seconds(1)});
  const std::string a = tmp.path + "/a", b = tmp.path + "/b", c = tmp.path + "/c";
  for (const auto& d : {a, b, c}) REQUIRE(store.Prepare(d, "k").ok());
  Write(a + "/" + SlotStore::FileName("k", 0), 100);
  Write(b + "/" + SlotStore::FileName("k", 0), 100);
  Age(a + "/" + SlotStore::FileName("k", 0), 30);
  Age(b + "/" + SlotStore::FileName("k", 0), 20);
  store.Touch(a, SlotStore::FileName("k", 0));  // a was restored just now: b is older

  CHECK_FALSE(store.Commit(c, "k", 0).ok());  // nothing was saved
  Write(c + "/" + SlotStore::PartialName("k", 0), 100);
  auto bytes = store.Commit(c, "k", 0);
  REQUIRE(bytes.ok());
  CHECK(bytes.value() == 100);
  CHECK_FALSE(fs::exists(c + "/" + SlotStore::PartialName("k", 0)));
  CHECK(fs::exists(c + "/" + SlotStore::FileName("k", 0)));
  CHECK(fs::exists(a + "/" + SlotStore::FileName("k", 0)));
  CHECK_FALSE(fs::exists(b + "/" + SlotStore::FileName("k", 0)));  // least recently used

  store.Configure(SlotStore::Settings{50, std::chrono::seconds(1)});
  Write(a + "/" + SlotStore::PartialName("k", 1), 60);
  REQUIRE(store.Commit(a, "k", 1).ok());
  // Over the bound on its own: even the newest file goes.
  CHECK(fs::is_empty(a));
  CHECK(fs::is_empty(c));
}

}  // namespace
}  // namespace swapd::testing
