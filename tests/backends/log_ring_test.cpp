#include "backends/log_ring.h"

#include <catch2/catch.hpp>
#include <thread>
#include <vector>

namespace swapd {
namespace {

TEST_CASE("LogRing keeps the last lines within its byte capacity", "[unit][backend]") {
  LogRing ring(100);
  for (int i = 0; i < 50; ++i) ring.Append("line " + std::to_string(i));  // 6-7 bytes each
  CHECK(ring.SizeBytes() <= 100);
  CHECK(ring.TotalLines() == 50);
  CHECK(ring.Tail(2) == "line 48\nline 49\n");
  std::string all = ring.Tail(1000);
  CHECK(all.find("line 0\n") == std::string::npos);
  CHECK(all.rfind("line 49\n") == all.size() - 8);
  CHECK(LogRing(10).Tail(5).empty());
}

TEST_CASE("LogRing truncates a line longer than its capacity", "[unit][backend]") {
  LogRing ring(8);
  ring.Append("a");
  ring.Append(std::string(20, 'x'));
  CHECK(ring.Tail(5) == std::string(8, 'x') + "\n");
}

TEST_CASE("LogRing is safe with concurrent writers and readers", "[unit][backend]") {
  LogRing ring(4096);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&ring, t] {
      for (int i = 0; i < 2000; ++i) {
        ring.Append("t" + std::to_string(t) + " " + std::to_string(i));
        if (i % 100 == 0) (void)ring.Tail(10);
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(ring.TotalLines() == 8000);
  CHECK(ring.SizeBytes() <= 4096);
}

TEST_CASE("LineSplitter splits a byte stream into lines", "[unit][backend]") {
  std::vector<std::string> lines;
  LineSplitter splitter([&](std::string_view l) { lines.emplace_back(l); }, 10);
  splitter.Feed("hel");
  splitter.Feed("lo\r\nwor");
  splitter.Feed("ld\n\nabcdefghijklmnopqrstuvw");
  splitter.Feed("xyz");
  CHECK(lines == std::vector<std::string>{"hello", "world", "", "abcdefghij", "klmnopqrst"});
  splitter.Flush();
  CHECK(lines.back() == "uvwxyz");
  splitter.Flush();  // nothing pending
  CHECK(lines.size() == 6);
}

}  // namespace
}  // namespace swapd
