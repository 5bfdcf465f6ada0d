// Plain HTTP calls and polling for integration tests: GET/POST a loopback URL once, or poll a URL
// until a condition holds or a deadline passes (readiness, a counter reaching a value). Every call
// makes its own connection, so the helpers are thread safe and never share state.
//
//   PollResult ready = PollUntil(base_url, "/health",
//       [](const HttpReply& r) { return r.status == 200; }, std::chrono::seconds(10));
//   INFO(ready.last.Describe());
//   REQUIRE(ready.met);
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace swapd::testing {

struct HttpReply {
  int status = -1;  // -1: no HTTP answer (connection refused, reset, timeout)
  std::string body;
  std::string error;  // why there was no answer
  std::string content_type;

  // "503 {...body...}" or "no answer: Connection", for failure messages.
  std::string Describe() const;
};

// One request. base_url is "http://127.0.0.1:PORT"; path starts with '/' and may hold a query.
HttpReply HttpGet(const std::string& base_url, const std::string& path,
                  std::chrono::milliseconds timeout = std::chrono::seconds(10));
HttpReply HttpPost(const std::string& base_url, const std::string& path, const std::string& body,
                   const std::string& content_type = "application/json",
                   std::chrono::milliseconds timeout = std::chrono::seconds(10));

struct PollResult {
  bool met = false;  // the condition held before the deadline
  HttpReply last;    // the last reply seen (the one that met the condition, if met)
  int attempts = 0;
};

// GETs base_url + path every `interval` until done(reply) is true or `deadline` has passed.
PollResult PollUntil(const std::string& base_url, const std::string& path,
                     const std::function<bool(const HttpReply&)>& done,
                     std::chrono::milliseconds deadline,
                     std::chrono::milliseconds interval = std::chrono::milliseconds(20));

// PollUntil the status is `status`.
PollResult WaitForStatus(const std::string& base_url, const std::string& path, int status,
                         std::chrono::milliseconds deadline);

// The value of one sample line of a Prometheus text (`series` is the name and labels, e.g.
// `swapd_model_starts_total{model="a"}`), or -1 when there is no such line.
double MetricSample(const std::string& text, const std::string& series);

// The message of an OpenAI-shaped error body ({"error":{"message":...}}); "" when the body is
// not one.
std::string ErrorMessage(const std::string& body);

}  // namespace swapd::testing
