#include "tests/support/event_stream.h"

#include <catch2/catch.hpp>

#include "tests/support/wait.h"

namespace swapd::testing {

using namespace std::chrono_literals;
using nlohmann::json;

bool TakeEvents(std::string& text, std::vector<Event>& out) {
  const std::string head = "event:message\ndata:";
  size_t pos = 0;
  for (size_t end; (end = text.find("\n\n", pos)) != std::string::npos; pos = end + 2) {
    std::string frame = text.substr(pos, end - pos);
    if (frame.rfind(':', 0) == 0) continue;
    if (frame.rfind(head, 0) != 0) return false;
    json envelope = json::parse(frame.substr(head.size()), nullptr, false);
    if (!envelope.is_object() || !envelope["type"].is_string() || !envelope["data"].is_string()) {
      return false;
    }
    json data = json::parse(envelope["data"].get<std::string>(), nullptr, false);
    if (data.is_discarded()) return false;
    out.push_back({envelope["type"].get<std::string>(), std::move(data)});
  }
  text.erase(0, pos);
  return true;
}

std::vector<std::string> Types(const std::vector<Event>& events) {
  std::vector<std::string> types;
  for (const Event& e : events) types.push_back(e.type);
  return types;
}

EventStream::EventStream(const std::string& url, std::string headers)
    : connection_(std::stoi(url.substr(url.rfind(':') + 1))), headers_(std::move(headers)) {
  reader_ = std::thread([this] { Read(); });
}

EventStream::~EventStream() {
  stop_ = true;
  reader_.join();
}

bool EventStream::Opened() { return opened_.Wait(20s) && status_ == 200; }

std::vector<Event> EventStream::Events() {
  std::lock_guard lock(mu_);
  CHECK_FALSE(malformed_);
  return events_;
}

size_t EventStream::Count() {
  std::lock_guard lock(mu_);
  return events_.size();
}

bool EventStream::WaitFor(const std::function<bool(const Event&)>& match, size_t from) {
  bool malformed = false;
  const bool found = testing::WaitFor(
      [&] {
        std::lock_guard lock(mu_);
        for (; from < events_.size(); ++from) {
          if (match(events_[from])) return true;
        }
        malformed = malformed_;
        return malformed;
      },
      60s, 20ms);
  return found && !malformed;
}

json EventStream::Find(const std::function<bool(const Event&)>& match, size_t from) {
  json found;
  WaitFor(
      [&](const Event& e) {
        if (!match(e)) return false;
        found = e.data;
        return true;
      },
      from);
  return found;
}

bool EventStream::Ended(std::chrono::milliseconds timeout) {
  return testing::WaitFor([&] { return ended_.load(); }, timeout);
}

void EventStream::Read() {
  if (!connection_.Send("GET /api/events HTTP/1.0\r\n" + headers_ + "\r\n")) {
    return opened_.Raise();
  }
  status_ = RawStatus(connection_.ReadUntil("\r\n\r\n"));
  opened_.Raise();
  while (!stop_) {
    std::string bytes = connection_.Read(1 << 16, 100ms);
    if (bytes.empty() && connection_.eof()) break;
    std::lock_guard lock(mu_);
    pending_ += bytes;
    if (!TakeEvents(pending_, events_)) malformed_ = true;
  }
  ended_ = connection_.eof();
}

}  // namespace swapd::testing
