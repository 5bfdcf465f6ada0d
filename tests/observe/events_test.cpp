// Tests of what GET /api/events sends, part by part: EventHub (llama-swap's frame, kept states,
// queues bounded in frames and bytes that drop and then resend the states), LogEvents (log lines
// batched per source, a flood cut and counted), ActivityEvents (one event per interval),
// modelStatus's shape from a real config. The route through the real swapd:
// tests/api/event_routes_test.cpp.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <nlohmann/json.hpp>

#include "config/loader.h"
#include "observe/activity_events.h"
#include "observe/event_feed.h"
#include "observe/event_hub.h"
#include "observe/log_events.h"
#include "observe/log_hub.h"
#include "tests/support/event_stream.h"
#include "tests/support/temp_dir.h"

namespace swapd::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::vector<Event> ParseEvents(std::string text) {
  std::vector<Event> out;
  REQUIRE(TakeEvents(text, out));
  CHECK(text.empty());
  return out;
}

std::string Text(const EventFrame& frame) { return *frame; }

TEST_CASE("An event frame is llama-swap's: type, and its data as a JSON string", "[unit][events]") {
  CHECK(Text(MakeEventFrame("logData", {{"source", "proxy"}, {"data", "hi\n"}})) ==
        "event:message\n"
        "data:{\"data\":\"{\\\"data\\\":\\\"hi\\\\n\\\",\\\"source\\\":\\\"proxy\\\"}\","
        "\"type\":\"logData\"}\n\n");
  // A backend's log line need not be UTF-8: replaced, never thrown.
  std::vector<Event> events = ParseEvents(Text(MakeEventFrame("logData", {{"data", "a\xff"}})));
  REQUIRE(events.size() == 1);
  CHECK(events[0].data["data"] == "a\xef\xbf\xbd");
}

TEST_CASE("EventHub: a reader gets its initial frames, the kept states, then what comes",
          "[unit][events]") {
  EventHub hub;
  hub.Publish("logData", {{"n", 0}});  // nobody reads: gone
  hub.PublishState("modelStatus", json::array({"old"}));
  hub.PublishState("profileChanged", {{"active", nullptr}});
  hub.PublishState("modelStatus", json::array({"new"}));  // replaces the kept one
  int told = 0;
  hub.SetOnSubscribe([&] { ++told; });
  auto reader = hub.Subscribe({MakeEventFrame("logData", {{"n", 1}})});
  CHECK(told == 1);
  CHECK(hub.readers() == 1);
  hub.Publish("loading", {{"model", "m"}});
  EventHub::Subscription::Batch batch = reader->Next(1s);
  std::string text;
  for (const EventFrame& f : batch.frames) text += *f;
  std::vector<Event> events = ParseEvents(text);
  CHECK(Types(events) ==
        std::vector<std::string>{"logData", "modelStatus", "profileChanged", "loading"});
  CHECK(events[0].data["n"] == 1);
  CHECK(events[1].data == json::array({"new"}));
  CHECK(batch.dropped == 0);
  CHECK(reader->Next(10ms).frames.empty());
  reader.reset();
  CHECK(hub.readers() == 0);
}

TEST_CASE("Paced streams write at the multiples of the pace: together, at most one pace apart",
          "[unit][events]") {
  using Clock = std::chrono::steady_clock;
  const auto at = [](std::chrono::milliseconds ms) { return Clock::time_point(ms); };
  // Two streams whose last batches went at different moments write next at the same one.
  CHECK(PacedAfter(at(1010ms), 250ms) == at(1250ms));
  CHECK(PacedAfter(at(1249ms), 250ms) == at(1250ms));
  // One that wrote at a multiple waits a whole pace; never longer.
  CHECK(PacedAfter(at(1250ms), 250ms) == at(1500ms));
  CHECK(PacedAfter(at(1000ms) + 1ns, 1000ms) == at(2000ms));
  // One that never wrote (the epoch) has its moment long past: its first batch goes at once.
  CHECK(PacedAfter(Clock::time_point(), 250ms) <= Clock::now());
  // A stream with no pace (GET /models/sse) never waits.
  CHECK(PacedAfter(at(1010ms), 0ms) == at(1010ms));
}

TEST_CASE("EventHub: a reader of some types gets only those, and is not woken for the others",
          "[unit][events]") {
  EventHub hub;
  hub.PublishState("modelStatus", json::array({"s"}));
  hub.PublishState("profileChanged", {{"active", nullptr}});
  auto models = hub.Subscribe({}, {}, {"modelStatus", "loading"});
  CHECK(hub.Watched("loading"));
  CHECK_FALSE(hub.Watched("logData"));  // a source may skip rendering it
  CHECK(Types(ParseEvents(*models->Next(1s).frames.at(0))) ==
        std::vector<std::string>{"modelStatus"});
  hub.Publish("logData", {{"data", "line"}});
  hub.Publish("inflight", {{"operation", "snapshot"}});
  CHECK(models->Next(10ms).frames.empty());
  auto all = hub.Subscribe();
  CHECK(hub.Watched("logData"));
  hub.Publish("logData", {{"data", "line"}});
  hub.Publish("loading", {{"model", "m"}});
  EventHub::Subscription::Batch batch = models->Next(1s);
  REQUIRE(batch.frames.size() == 1);
  CHECK(Types(ParseEvents(*batch.frames[0])) == std::vector<std::string>{"loading"});
  std::string text;
  for (const EventFrame& f : all->Next(1s).frames) text += *f;
  CHECK(Types(ParseEvents(text)) ==
        std::vector<std::string>{"modelStatus", "profileChanged", "logData", "loading"});
}

TEST_CASE("EventHub: Watched follows the readers of each type as they come and go",
          "[unit][events]") {
  EventHub hub;
  CHECK_FALSE(hub.Watched("loading"));
  auto models = hub.Subscribe({}, {}, {"modelStatus", "loading"});
  auto more = hub.Subscribe({}, {}, {"loading"});
  CHECK(hub.Watched("loading"));
  CHECK(hub.Watched("modelStatus"));
  models.reset();
  CHECK(hub.Watched("loading"));  // `more` still takes it
  CHECK_FALSE(hub.Watched("modelStatus"));
  more.reset();
  CHECK_FALSE(hub.Watched("loading"));
  // More types than the hub counts without its lock: the others are still told apart.
  std::vector<std::unique_ptr<EventHub::Subscription>> many;
  for (int i = 0; i < 20; ++i) many.push_back(hub.Subscribe({}, {}, {"t" + std::to_string(i)}));
  CHECK(hub.Watched("t3"));
  CHECK(hub.Watched("t19"));
  CHECK_FALSE(hub.Watched("t20"));
  many.back().reset();
  CHECK_FALSE(hub.Watched("t19"));
  many[3].reset();
  CHECK_FALSE(hub.Watched("t3"));
  CHECK(hub.Watched("t18"));
  auto all = hub.Subscribe();
  CHECK(hub.Watched("t20"));
}

TEST_CASE("EventHub: a slow reader loses events, counted, then gets the states again",
          "[unit][events]") {
  EventHub hub(3);
  hub.PublishState("modelStatus", json::array({"s"}));
  auto slow = hub.Subscribe();
  auto fast = hub.Subscribe();
  CHECK(fast->Next(1s).frames.size() == 1);  // the kept state
  // The kept state is initial, not counted against the bound of 3.
  for (int i = 0; i < 5; ++i) hub.Publish("logData", {{"n", i}});
  CHECK(fast->Next(1s).frames.size() == 4);  // its bound too: 3, 2 lost, and the state again
  EventHub::Subscription::Batch batch = slow->Next(1s);
  CHECK(batch.dropped == 2);
  std::string text;
  for (const EventFrame& f : batch.frames) text += *f;
  // Its initial state, 3 of the 5, then the state again (what it lost may have been one).
  CHECK(Types(ParseEvents(text)) ==
        std::vector<std::string>{"modelStatus", "logData", "logData", "logData", "modelStatus"});
  CHECK(hub.dropped() == 4);
  CHECK_THAT(EventMetricsText(hub), Catch::Contains("swapd_events_dropped_total 4\n") &&
                                        Catch::Contains("swapd_event_readers 2\n"));
}

TEST_CASE("EventHub: a reader's queue is bounded in bytes too", "[unit][events]") {
  const EventFrame frame = MakeEventFrame("logData", {{"data", std::string(100, 'x')}});
  EventHub hub(1000, 3 * frame->size());
  auto reader = hub.Subscribe();
  for (int i = 0; i < 5; ++i) hub.Publish("logData", {{"data", std::string(100, 'x')}});
  EventHub::Subscription::Batch batch = reader->Next(1s);
  CHECK(batch.frames.size() == 3);
  CHECK(batch.dropped == 2);
  // Taken: the bound is free again.
  hub.Publish("logData", {{"data", std::string(100, 'x')}});
  CHECK(reader->Next(1s).frames.size() == 1);
}

// The events of a subscription until `done` holds for what came so far, or 10 s.
std::vector<Event> ReadUntil(EventHub::Subscription& reader,
                             const std::function<bool(const std::vector<Event>&)>& done) {
  std::vector<Event> events;
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done(events) && std::chrono::steady_clock::now() < deadline) {
    for (const EventFrame& f : reader.Next(100ms).frames) text += *f;
    REQUIRE(TakeEvents(text, events));
  }
  return events;
}

// Takes every free file descriptor below a lowered limit while it lives, as a swapd out of them.
class NoFdsLeft {
 public:
  NoFdsLeft() {
    getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit low = saved_;
    low.rlim_cur = std::min<rlim_t>(saved_.rlim_cur, 1024);
    setrlimit(RLIMIT_NOFILE, &low);
    for (int fd; (fd = ::dup(STDERR_FILENO)) >= 0;) held_.push_back(fd);
  }
  ~NoFdsLeft() {
    for (int fd : held_) ::close(fd);
    setrlimit(RLIMIT_NOFILE, &saved_);
  }
  NoFdsLeft(const NoFdsLeft&) = delete;
  NoFdsLeft& operator=(const NoFdsLeft&) = delete;

 private:
  rlimit saved_{};
  std::vector<int> held_;
};

TEST_CASE("A reader made with no file descriptor left says so (fd -1), and still gets its data",
          "[unit][events]") {
  EventHub events;
  LogHub logs;
  std::unique_ptr<EventHub::Subscription> reader;
  std::unique_ptr<LogHub::Subscription> tail;
  {
    NoFdsLeft none;
    reader = events.Subscribe();
    tail = logs.Subscribe("", false);
  }
  CHECK(reader->fd() < 0);  // its stream answers 503 (ServeEvents, /logs/stream)
  CHECK(tail->fd() < 0);
  events.Publish("inflight", {{"total", 1}});
  logs.Append("m", "a line");
  CHECK(reader->Next(0ms).frames.size() == 1);
  CHECK(tail->Next(0ms).size() == 1);
  CHECK(events.Subscribe()->fd() >= 0);  // with descriptors again, readers get one
}

TEST_CASE("LogEvents: the lines of each source within an interval go out as one logData event",
          "[unit][events]") {
  LogHub logs;
  EventHub hub;
  LogEvents log_events(logs, hub, LogEventLimits{std::chrono::hours(1), 1 << 20, 1 << 20});
  auto reader = hub.Subscribe();
  logs.Append(LogHub::kSwapdSource, "one");
  logs.Append("m", "backend line 1");
  logs.Append(LogHub::kSwapdSource, "two");
  logs.Append("m", "backend line 2");
  CHECK(reader->Next(100ms).frames.empty());  // the interval has not passed
  log_events.Flush();                         // as a new reader's subscription does
  std::vector<Event> events = ReadUntil(*reader, [](const auto& e) { return e.size() >= 2; });
  REQUIRE(events.size() == 2);
  CHECK(events[0].data == json{{"source", "proxy"}, {"data", "one\ntwo\n"}});
  CHECK(events[1].data ==
        json{{"source", "upstream"}, {"data", "[m] backend line 1\n[m] backend line 2\n"}});
  CHECK(reader->Next(100ms).frames.empty());
  CHECK(log_events.skipped() == 0);
}

TEST_CASE("LogEvents: lines go out when the interval has passed, only while someone reads",
          "[unit][events]") {
  LogHub logs;
  EventHub hub;
  LogEvents log_events(logs, hub, LogEventLimits{20ms, 1 << 20, 1 << 20});
  logs.Append(LogHub::kSwapdSource, "nobody reads this");  // not kept for a later reader
  auto reader = hub.Subscribe();
  logs.Append(LogHub::kSwapdSource, "first");
  std::vector<Event> events = ReadUntil(*reader, [](const auto& e) { return !e.empty(); });
  REQUIRE(events.size() == 1);
  CHECK(events[0].data == json{{"source", "proxy"}, {"data", "first\n"}});
}

TEST_CASE("LogEvents: a flood beyond the allowance is cut, and the event says how many lines",
          "[unit][events]") {
  LogHub logs;
  EventHub hub;
  // A burst of 100 bytes and almost no refill: the 13-byte lines beyond the first 7 are cut.
  LogEvents log_events(logs, hub, LogEventLimits{std::chrono::hours(1), 100, 1});
  auto reader = hub.Subscribe();
  for (int i = 0; i < 50; ++i) logs.Append("m", "line " + std::to_string(100 + i));
  log_events.Flush();
  std::vector<Event> events = ReadUntil(*reader, [](const auto& e) { return !e.empty(); });
  REQUIRE(events.size() == 1);
  const std::string data = events[0].data["data"];
  CHECK(data.find("[m] line 106\n") != std::string::npos);
  CHECK(data.find("line 107") == std::string::npos);
  CHECK_THAT(data, Catch::EndsWith("[swapd] ... 43 log lines not sent live (too many at once; "
                                   "GET /logs has the recent ones)\n"));
  CHECK(log_events.skipped() == 43);
  CHECK_THAT(LogEventMetricsText(log_events),
             Catch::Contains("swapd_events_log_lines_skipped_total 43\n"));
  CHECK(logs.History("m").size() == 50);  // the log itself keeps them all
}

TEST_CASE("ActivityEvents: rows recorded within an interval are one activity event, the newest id",
          "[unit][events]") {
  EventHub hub;
  auto reader = hub.Subscribe();
  constexpr auto kEvery = 50ms;
  ActivityEvents activity(hub, kEvery);
  const auto began = std::chrono::steady_clock::now();
  for (int64_t id = 1; id <= 500; ++id) activity.Recorded(id);
  const auto took = std::chrono::steady_clock::now() - began;
  std::vector<Event> events = ReadUntil(*reader, [](const auto& e) {
    return !e.empty() && e.back().data == json{{"id", 500}};
  });
  // One event per interval at most (the calls take well under one), the ids only growing.
  REQUIRE(!events.empty());
  CHECK(events.back().data == json{{"id", 500}});
  CHECK(events.size() <= 1 + static_cast<size_t>(took / kEvery) + 1);
  for (size_t i = 0; i < events.size(); ++i) {
    CHECK(events[i].type == "activity");
    if (i > 0) CHECK(events[i].data["id"] > events[i - 1].data["id"]);
  }
  activity.Recorded(400);  // an older id than the last told: nothing new to tell
  activity.Recorded(501);
  events = ReadUntil(*reader, [](const auto& e) { return !e.empty(); });
  REQUIRE(events.size() == 1);
  CHECK(events[0].data == json{{"id", 501}});
}

TEST_CASE("modelStatus lists every model as llama-swap does, then the peers' models",
          "[unit][events]") {
  TempDir tmp;
  LoadOptions options;
  options.config_path = tmp.Write("config.yaml", R"(
models:
  b-plain:
    cmd: fake --port ${PORT}
    unlisted: true
  a-vision:
    cmd: fake --port ${PORT}
    name: Vision
    description: sees
    aliases: [eyes]
    capabilities: {in: [text, image], out: [text], context: 4096}
peers:
  far:
    proxy: http://127.0.0.1:9
    models: [big]
)");
  LoadResult loaded = LoadConfig(options);
  REQUIRE(loaded.ok());
  ModelSnapshot failed;
  failed.id = "b-plain";
  failed.backend.state = BackendState::kFailed;
  failed.backend.last_error = "exit code 3";
  ModelSnapshot ready;
  ready.id = "a-vision";
  ready.backend.state = BackendState::kReady;
  json status = ModelStatusJson(*loaded.config, {failed, ready});
  REQUIRE(status.size() == 3);
  CHECK(status[0] == json{{"id", "a-vision"},
                          {"name", "Vision"},
                          {"description", "sees"},
                          {"state", "ready"},
                          {"unlisted", false},
                          {"peerID", ""},
                          {"aliases", {"eyes"}},
                          {"capabilities",
                           {{"vision", true},
                            {"audio_transcriptions", false},
                            {"audio_speech", false},
                            {"image_generation", false},
                            {"image_to_image", false},
                            {"function_calling", false},
                            {"reranker", false}}},
                          {"context_length", 4096}});
  CHECK_FALSE(status[0].contains("port"));  // none told: not a ${PORT} model
  ready.backend.port = 5801;                // its ${PORT}, moved off a taken 5800
  CHECK(ModelStatusJson(*loaded.config, {failed, ready})[0]["port"] == 5801);
  CHECK(status[1]["id"] == "b-plain");
  CHECK(status[1]["state"] == "stopped");  // llama-swap has no "failed"
  CHECK(status[1]["last_error"] == "exit code 3");
  CHECK(status[1]["unlisted"] == true);
  CHECK(status[2] == json{{"id", "far/big"},
                          {"name", ""},
                          {"description", ""},
                          {"state", ""},
                          {"unlisted", false},
                          {"peerID", "far"}});
}

}  // namespace
}  // namespace swapd::testing
