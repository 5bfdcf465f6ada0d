// Tests of FanOut, the queues under EventHub and LogHub: what a reader takes and starts with,
// items shared and not copied, the bounds in items and bytes that lose and count, the wake-up fd,
// Close, readers coming and going; then threads: readers that keep up get everything in order, a
// slow one loses only what it did not take, a joining reader sees the owner's state and what
// follows it without a gap, and Close ends a wait at once.
#include "observe/fan_out.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <numeric>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;

// Items are numbers; a reader's filter is the topic it takes ("" every topic).
using Fan = FanOut<int, std::string>;

Fan::Item Make(int n) { return std::make_shared<const int>(n); }

auto TakesTopic(const std::string& topic) {
  return [topic](const std::string& wanted) { return wanted.empty() || wanted == topic; };
}

// Starts with nothing.
auto Nothing() {
  return [](const std::string&, std::vector<Fan::Item>&) {};
}

std::vector<int> Numbers(const std::vector<Fan::Item>& items) {
  std::vector<int> out;
  for (const Fan::Item& item : items) out.push_back(*item);
  return out;
}

TEST_CASE("FanOut: a reader gets what it starts with, then what its filter takes, shared",
          "[unit][fanout][events][logs]") {
  Fan fan(100);
  fan.Publish(Make(0), 1, TakesTopic("a"));  // nobody reads yet: gone
  auto all = fan.Subscribe("", Nothing());
  auto only_a = fan.Subscribe("a", [](const std::string& filter, std::vector<Fan::Item>& queue) {
    CHECK(filter == "a");  // the reader's own filter
    queue.push_back(Make(-1));
  });
  CHECK(fan.readers() == 2);
  CHECK(only_a->filter() == "a");

  const Fan::Item one = Make(1);
  fan.Publish(one, 1, TakesTopic("a"));
  fan.Publish(Make(2), 1, TakesTopic("b"));
  Fan::Reader::Batch batch = only_a->Next(1s);
  REQUIRE(Numbers(batch.items) == std::vector<int>{-1, 1});
  CHECK(batch.dropped == 0);
  CHECK(batch.items[1] == one);  // the very item, not a copy
  CHECK(Numbers(all->Next(1s).items) == std::vector<int>{1, 2});
  CHECK(only_a->Next(0ms).items.empty());  // 2 was not for it

  CHECK(fan.AnyReader([](const std::string& wanted) { return wanted == "a"; }));
  CHECK_FALSE(fan.AnyReader(fan.Lock(), [](const std::string& wanted) { return wanted == "b"; }));
  only_a.reset();
  CHECK(fan.readers() == 1);
  CHECK_FALSE(fan.AnyReader([](const std::string& wanted) { return wanted == "a"; }));
  fan.Publish(Make(3), 1, TakesTopic("a"));
  CHECK(Numbers(all->Next(1s).items) == std::vector<int>{3});
}

TEST_CASE("FanOut: a reader's queue is bounded in items and in bytes; what it loses is counted",
          "[unit][fanout][events][logs]") {
  Fan fan(3, 100);
  auto by_items = fan.Subscribe("", [](const std::string&, std::vector<Fan::Item>& queue) {
    for (int i = 0; i < 5; ++i) queue.push_back(Make(-1));  // not counted against the bounds
  });
  for (int i = 1; i <= 5; ++i) fan.Publish(Make(i), 10, TakesTopic("a"));
  int after_loss_ran = 0;
  Fan::Reader::Batch batch = by_items->Next(1s, [&](std::vector<Fan::Item>& items) {
    ++after_loss_ran;
    items.push_back(Make(99));  // what brings it up to date goes after what it kept
  });
  CHECK(Numbers(batch.items) == std::vector<int>{-1, -1, -1, -1, -1, 1, 2, 3, 99});
  CHECK(batch.dropped == 2);
  CHECK(after_loss_ran == 1);
  CHECK(fan.dropped() == 2);
  // Taken: the queue is free again, and without a loss after_loss does not run.
  fan.Publish(Make(6), 10, TakesTopic("a"));
  batch = by_items->Next(1s, [&](std::vector<Fan::Item>&) { ++after_loss_ran; });
  CHECK(Numbers(batch.items) == std::vector<int>{6});
  CHECK(batch.dropped == 0);
  CHECK(after_loss_ran == 1);
  by_items.reset();

  auto by_bytes = fan.Subscribe("", Nothing());
  for (int i = 1; i <= 3; ++i) fan.Publish(Make(i), 40, TakesTopic("a"));  // 120 > 100 bytes
  batch = by_bytes->Next(1s);
  CHECK(Numbers(batch.items) == std::vector<int>{1, 2});
  CHECK(batch.dropped == 1);
  CHECK(fan.dropped() == 3);  // in total, of every reader
}

TEST_CASE("FanOut: a reader's fd is readable while something waits for it, a loss too",
          "[unit][fanout][events][logs]") {
  Fan fan(10, 100);
  auto reader = fan.Subscribe("a", Nothing());
  REQUIRE(reader->fd() >= 0);
  CHECK_FALSE(WaitReadable(reader->fd(), 0ms));
  fan.Publish(Make(1), 1, TakesTopic("b"));  // not for it: not woken
  CHECK_FALSE(WaitReadable(reader->fd(), 0ms));
  fan.Publish(Make(2), 1, TakesTopic("a"));
  fan.Publish(Make(3), 1, TakesTopic("a"));
  CHECK(WaitReadable(reader->fd(), 0ms));
  CHECK(Numbers(reader->Next(0ms).items) == std::vector<int>{2, 3});
  CHECK_FALSE(WaitReadable(reader->fd(), 0ms));  // taken: quiet again

  // An item larger than the whole bound is lost with the queue empty: the loss alone wakes it.
  fan.Publish(Make(4), 1000, TakesTopic("a"));
  CHECK(WaitReadable(reader->fd(), 0ms));
  Fan::Reader::Batch batch = reader->Next(0ms);
  CHECK(batch.items.empty());
  CHECK(batch.dropped == 1);
  CHECK_FALSE(WaitReadable(reader->fd(), 0ms));

  // A reader that starts with items is readable at once.
  auto started = fan.Subscribe(
      "", [](const std::string&, std::vector<Fan::Item>& queue) { queue.push_back(Make(0)); });
  CHECK(WaitReadable(started->fd(), 0ms));
}

TEST_CASE("FanOut: Close ends every wait at once, for good; items still arrive",
          "[unit][fanout][events][logs]") {
  Fan fan(10);
  auto reader = fan.Subscribe("", Nothing());
  fan.Close();
  CHECK(WaitReadable(reader->fd(), 0ms));
  const auto began = std::chrono::steady_clock::now();
  CHECK(reader->Next(60s).items.empty());
  CHECK(std::chrono::steady_clock::now() - began < 30s);         // did not wait its timeout
  CHECK(WaitReadable(reader->fd(), 0ms));                        // stays readable
  CHECK(WaitReadable(fan.Subscribe("", Nothing())->fd(), 0ms));  // and so is a later reader's
  fan.Publish(Make(1), 1, TakesTopic("a"));
  CHECK(Numbers(reader->Next(0ms).items) == std::vector<int>{1});
}

TEST_CASE("FanOut: Close from another thread ends a reader's wait",
          "[unit][fanout][events][logs]") {
  Fan fan(10);
  auto reader = fan.Subscribe("", Nothing());
  std::atomic<bool> waiting{false};
  auto waited = std::async(std::launch::async, [&] {
    waiting = true;
    const auto began = std::chrono::steady_clock::now();
    reader->Next(60s);
    return std::chrono::steady_clock::now() - began;
  });
  REQUIRE(WaitFor([&] { return waiting.load(); }));
  fan.Close();
  REQUIRE(waited.wait_for(30s) == std::future_status::ready);
  CHECK(waited.get() < 30s);
}

TEST_CASE("FanOut: readers on their own threads get every item in order, or lose it counted",
          "[unit][fanout][events][logs]") {
  constexpr int kItems = 20000;
  constexpr int kReaders = 4;
  Fan fan(kItems);  // room for everything: the readers that keep up lose nothing
  std::vector<std::unique_ptr<Fan::Reader>> readers;
  for (int r = 0; r < kReaders; ++r) readers.push_back(fan.Subscribe("", Nothing()));
  Fan small(8);  // a reader of it may not keep up
  auto slow = small.Subscribe("", Nothing());

  // (The threads assert nothing themselves: Catch's assertions are for the test's own thread.)
  std::vector<std::future<std::vector<int>>> got;
  for (auto& reader : readers) {
    got.push_back(std::async(std::launch::async, [&reader] {
      std::vector<int> numbers;  // a loss would leave it short
      const auto deadline = std::chrono::steady_clock::now() + 60s;
      while (numbers.size() < static_cast<size_t>(kItems) &&
             std::chrono::steady_clock::now() < deadline) {
        for (const Fan::Item& item : reader->Next(100ms).items) numbers.push_back(*item);
      }
      return numbers;
    }));
  }
  std::atomic<bool> published{false};
  auto slow_got = std::async(std::launch::async, [&] {
    uint64_t taken = 0;
    uint64_t lost = 0;
    int last = -1;
    bool in_order = true;
    while (taken + lost < static_cast<uint64_t>(kItems)) {
      const bool done = published.load();
      Fan::Reader::Batch batch = slow->Next(done ? 0ms : 100ms);
      for (const Fan::Item& item : batch.items) {
        in_order = in_order && *item > last;
        last = *item;
      }
      taken += batch.items.size();
      lost += batch.dropped;
      if (done && batch.items.empty() && batch.dropped == 0) break;  // nothing more will come
    }
    return std::make_tuple(taken, lost, in_order);
  });

  for (int i = 0; i < kItems; ++i) {
    const Fan::Item item = Make(i);
    fan.Publish(item, 1, TakesTopic("a"));
    small.Publish(item, 1, TakesTopic("a"));
  }
  published = true;

  std::vector<int> all(kItems);
  std::iota(all.begin(), all.end(), 0);
  for (auto& numbers : got) {
    REQUIRE(numbers.wait_for(90s) == std::future_status::ready);
    CHECK(numbers.get() == all);
  }
  REQUIRE(slow_got.wait_for(90s) == std::future_status::ready);
  const auto [taken, lost, in_order] = slow_got.get();
  CHECK(taken + lost == static_cast<uint64_t>(kItems));  // every item taken or counted lost
  CHECK(lost == small.dropped());
  CHECK(in_order);
  CHECK(fan.dropped() == 0);
}

// An owner that keeps its latest item, as EventHub keeps states: changed and published under the
// fan-out's lock, given to a joining reader under it too.
TEST_CASE("FanOut: a reader that joins while items come sees the kept one, then each later one",
          "[unit][fanout][events][logs]") {
  constexpr int kRounds = 1000;  // a reader joins this often while the publisher runs
  Fan fan(100000);
  Fan::Item kept = Make(0);  // Guarded by fan's lock
  std::atomic<bool> stop{false};
  std::thread publisher([&] {
    for (int i = 1; !stop; ++i) {
      Fan::Item item = Make(i);
      Fan::Held held = fan.Lock();
      kept = item;
      fan.Publish(held, item, 1, TakesTopic("a"));
    }
  });
  int short_rounds = 0;
  int broken_rounds = 0;  // with a gap or a repeat between what it was given and what followed
  for (int round = 0; round < kRounds; ++round) {
    auto reader = fan.Subscribe(
        "", [&](const std::string&, std::vector<Fan::Item>& queue) { queue.push_back(kept); });
    std::vector<int> numbers;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (numbers.size() < 10 && std::chrono::steady_clock::now() < deadline) {
      for (const Fan::Item& item : reader->Next(100ms).items) numbers.push_back(*item);
    }
    if (numbers.size() < 10) ++short_rounds;
    for (size_t i = 1; i < numbers.size(); ++i) {
      if (numbers[i] != numbers[i - 1] + 1) {
        ++broken_rounds;
        break;
      }
    }
  }
  stop = true;
  publisher.join();
  CHECK(short_rounds == 0);
  CHECK(broken_rounds == 0);
}

}  // namespace
}  // namespace swapd::testing
