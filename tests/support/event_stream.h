// Reading GET /api/events as a llama-swap client does, for integration tests: the frames decoded
// (llama-swap's data is JSON inside a JSON string), and EventStream, one stream on its own
// connection read on a thread. Thread safe.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/latch.h"
#include "tests/support/raw_connection.h"

namespace swapd::testing {

struct Event {
  std::string type;
  nlohmann::json data;
};

// Takes the complete frames off the front of `text` and decodes them as a llama-swap client does
// (data is JSON in a string). Comments (keep-alives) are skipped. False on a malformed frame.
bool TakeEvents(std::string& text, std::vector<Event>& out);

std::vector<std::string> Types(const std::vector<Event>& events);

// One GET /api/events on its own connection (HTTP/1.0: the body is the stream itself, until the
// server closes it), read and decoded on a thread until destroyed.
class EventStream {
 public:
  // `headers`: extra request lines ("Authorization: Bearer k\r\n").
  explicit EventStream(const std::string& url, std::string headers = "");
  ~EventStream();
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  bool Opened();
  std::vector<Event> Events();  // fails the test if a frame was malformed
  size_t Count();
  // Waits (up to a minute) until an event after the first `from` satisfies `match`.
  bool WaitFor(const std::function<bool(const Event&)>& match, size_t from = 0);
  // The first event after the first `from` that satisfies `match`, waited for; null if none came.
  nlohmann::json Find(const std::function<bool(const Event&)>& match, size_t from = 0);
  // The server closed the stream.
  bool Ended(std::chrono::milliseconds timeout);

 private:
  void Read();

  RawConnection connection_;
  const std::string headers_;
  Latch opened_;
  std::atomic<int> status_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> ended_{false};
  std::mutex mu_;
  std::string pending_;        // Guarded by mu_; an incomplete frame
  std::vector<Event> events_;  // Guarded by mu_
  bool malformed_ = false;     // Guarded by mu_
  std::thread reader_;
};

}  // namespace swapd::testing
