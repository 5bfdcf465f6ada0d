// ReadinessProbe: asks a starting backend whether it is ready. The real probe sends
// GET <proxy><checkEndpoint> with http/'s HttpClient; only HTTP 200 is ready (llama-server answers
// 503 while it loads). PollBackoff is the schedule between checks: fast first, backing off gently,
// so that a swap costs the backend's load time and not the poll interval. A ReadinessProbe is used
// by one thread at a time (the thread driving a start). PollBackoff is a plain value.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "config/config.h"

namespace swapd {

struct ProbeResult {
  bool ready = false;
  // What was seen, for messages: "HTTP 503", "Connection refused (127.0.0.1:5800)".
  std::string detail;
};

class ReadinessProbe {
 public:
  virtual ~ReadinessProbe() = default;
  // One check. Returns within about a second (connect and read timeouts).
  virtual ProbeResult Check() = 0;
  // What is checked, for messages (e.g. the URL).
  virtual std::string Target() const = 0;
};

// GET `proxy_url` + `check_endpoint` ("http://localhost:5800" + "/health"). `proxy_url` may carry a
// path prefix ("http://host:8000/v1" + "/health" checks /v1/health).
std::unique_ptr<ReadinessProbe> MakeHttpReadinessProbe(const std::string& proxy_url,
                                                       const std::string& check_endpoint);

// Makes the probe for a model; the default is MakeHttpReadinessProbe(model.proxy,
// model.check_endpoint). Tests pass a fake.
using ProbeFactory = std::function<std::unique_ptr<ReadinessProbe>(const ModelConfig& model)>;
ProbeFactory DefaultProbeFactory();

// Intervals between checks: `first`, then each one `factor` times the previous, up to `max`.
class PollBackoff {
 public:
  explicit PollBackoff(std::chrono::milliseconds first = std::chrono::milliseconds(10),
                       std::chrono::milliseconds max = std::chrono::milliseconds(100),
                       double factor = 1.05);
  std::chrono::milliseconds Next();

 private:
  double next_ms_;
  double max_ms_;
  double factor_;
};

}  // namespace swapd
