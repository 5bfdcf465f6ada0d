// sendLoadingState end to end: the real swapd and fake backends. A streamed chat request for a
// model that is loading gets the loading text as reasoning_content chunks, then the backend's own
// stream in the same response; a failed load ends with an error event; a ready model, an
// unstreamed request and a model that turns it off get no loading text; a model loaded before
// shows its usual total.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/http_wait.h"
#include "tests/support/raw_connection.h"
#include "tests/support/swapd_process.h"
#include "tests/support/wait.h"

namespace swapd::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// The reasoning_content of every loading chunk, joined, and the other events' data.
struct Events {
  std::string loading;
  std::vector<std::string> others;
};

Events Split(const std::string& body) {
  Events e;
  size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    const size_t end = body.find("\n\n", at);
    const std::string data = body.substr(at + 6, end - at - 6);
    at = end == std::string::npos ? body.size() : end + 2;
    const json doc = json::parse(data, nullptr, false);
    if (doc.is_object() && doc.contains("choices") && doc.size() == 1 &&
        doc["choices"][0]["delta"].contains("reasoning_content")) {
      e.loading += doc["choices"][0]["delta"]["reasoning_content"].get<std::string>();
    } else {
      e.others.push_back(data);
    }
  }
  return e;
}

HttpReply Chat(const SwapdInstance& s, const std::string& model, bool stream) {
  return HttpPost(s.base_url, "/v1/chat/completions", ChatBody(model, stream), "application/json",
                  60s);
}

TEST_CASE("sendLoadingState: the load is told in reasoning_content, then the backend's stream",
          "[integration][front][loading]") {
  const std::string yaml =
      "sendLoadingState: true\nmodels:\n" +
      FakeModelYaml("slow", FreeLoopbackPort(), "--load-ms 2500") +
      FakeModelYaml("quiet", FreeLoopbackPort(), "--load-ms 300", "    sendLoadingState: false\n") +
      FakeModelYaml("broken", FreeLoopbackPort(), "--load-ms 300 --exit-during-load 3");
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const SwapdInstance& s = swapd.value();

  HttpReply first = Chat(s, "slow", true);
  INFO(first.Describe());
  REQUIRE(first.status == 200);
  CHECK(first.content_type == "text/event-stream");
  Events e = Split(first.body);
  INFO(e.loading);
  CHECK(e.loading.rfind("━━━━━\nswapd loading model: slow\n", 0) == 0);
  // A line a second: the stage (what the backend printed so far), the time, the share done.
  CHECK_THAT(e.loading, Catch::Contains("s, "));
  CHECK_THAT(e.loading, Catch::Contains("%"));
  CHECK_THAT(e.loading, Catch::Contains("\nDone! ("));
  const std::string tail = "\n━━━━━\n \n";
  REQUIRE(e.loading.size() > tail.size());
  CHECK(e.loading.substr(e.loading.size() - tail.size()) == tail);
  // Then the backend's own chunks, to its [DONE].
  REQUIRE(e.others.size() >= 2);
  CHECK(e.others.back() == "[DONE]");
  CHECK(json::parse(e.others.front())["object"] == "chat.completion.chunk");

  // Ready now: no loading text.
  HttpReply again = Chat(s, "slow", true);
  CHECK(again.status == 200);
  CHECK(Split(again.body).loading.empty());

  // Loaded before: the line tells the usual total.
  REQUIRE(HttpPost(s.base_url, "/api/models/unload/slow", "").status == 200);
  HttpReply second_load = Chat(s, "slow", true);
  CHECK(second_load.status == 200);
  CHECK_THAT(Split(second_load.body).loading, Catch::Contains(" (usually "));

  // Not streamed, or turned off for the model: a plain answer.
  REQUIRE(HttpPost(s.base_url, "/api/models/unload/slow", "").status == 200);
  HttpReply whole = Chat(s, "slow", false);
  CHECK(whole.status == 200);
  CHECK(whole.content_type.rfind("application/json", 0) == 0);
  HttpReply quiet = Chat(s, "quiet", true);
  CHECK(quiet.status == 200);
  CHECK(Split(quiet.body).loading.empty());

  // A load that fails: the loading text, then an error event with the exit status.
  HttpReply broken = Chat(s, "broken", true);
  INFO(broken.Describe());
  CHECK(broken.status == 200);
  Events b = Split(broken.body);
  CHECK_THAT(b.loading, Catch::Contains("swapd loading model: broken"));
  REQUIRE(b.others.size() == 1);
  const json error = json::parse(b.others[0]);
  CHECK_THAT(error["error"]["message"].get<std::string>(), Catch::Contains("exit"));
  // The activity history has the refused request with its error (recorded after the answer went
  // out, written a moment later).
  HttpReply activity;
  CHECK(WaitFor(
      [&] {
        activity = HttpGet(s.base_url, "/api/metrics/activity?model=broken");
        return activity.body.find("\"error_msg\"") != std::string::npos &&
               activity.body.find("\"total\":0") == std::string::npos;
      },
      20s));
  INFO(activity.body);
  CHECK_THAT(activity.body, Catch::Contains("exit"));
}

TEST_CASE("sendLoadingState: a client that leaves while the model loads leaves the queue",
          "[integration][front][loading]") {
  const std::string yaml = "sendLoadingState: true\nmodels:\n" +
                           FakeModelYaml("b", FreeLoopbackPort(), "--load-ms 60000");
  auto swapd = StartSwapd(yaml);
  REQUIRE(swapd.ok());
  const SwapdInstance& s = swapd.value();
  auto queued = [&](const std::string& model) {
    const json api = json::parse(HttpGet(s.base_url, "/api/models").body);
    for (const json& m : api["models"]) {
      if (m["id"] == model) return m["queued"].get<int>();
    }
    return -1;
  };
  {
    RawConnection c(s.port);
    REQUIRE(c.Send(RawPost("/v1/chat/completions", ChatBody("b", true))));
    const std::string head = c.ReadUntil("swapd loading model: b");
    CHECK(RawStatus(head) == 200);
    CHECK(WaitFor([&] { return queued("b") == 1; }, 20s));
  }  // the client leaves while b starts
  CHECK(WaitFor([&] { return queued("b") == 0; }, 20s));
  // swapd goes on serving; the start goes on (as a start for a request that gave up does).
  CHECK(HttpGet(s.base_url, "/v1/models").status == 200);
}

}  // namespace
}  // namespace swapd::testing
