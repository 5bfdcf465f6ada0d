#include "backends/readiness_probe.h"

#include <algorithm>

#include "base/proxy_url.h"
#include "http/http_client.h"

namespace swapd {
namespace {

// A check gives up after a second of connecting or of silence: a backend that slow to answer
// /health is not ready, and the next check comes soon.
UpstreamConnection::Timeouts CheckTimeouts() {
  UpstreamConnection::Timeouts timeouts;
  timeouts.connect = std::chrono::seconds(1);
  timeouts.tls_handshake = std::chrono::seconds(1);
  timeouts.read = std::chrono::seconds(1);
  timeouts.write = std::chrono::seconds(1);
  return timeouts;
}

class HttpReadinessProbe : public ReadinessProbe {
 public:
  HttpReadinessProbe(const std::string& proxy_url, const std::string& check_endpoint)
      : client_(ParseProxyUrl(proxy_url), CheckTimeouts()) {
    request_.target =
        (check_endpoint.empty() || check_endpoint[0] != '/' ? "/" : "") + check_endpoint;
  }

  ProbeResult Check() override {
    ClientResponse response;
    UpstreamFailure failure;
    if (!client_.Fetch(request_, response, failure)) return {false, failure.text};
    return {response.status == 200, "HTTP " + std::to_string(response.status)};
  }

  std::string Target() const override {
    return client_.url().origin + client_.url().path_prefix + request_.target;
  }

 private:
  HttpClient client_;
  ClientRequest request_;  // GET <checkEndpoint>
};

}  // namespace

std::unique_ptr<ReadinessProbe> MakeHttpReadinessProbe(const std::string& proxy_url,
                                                       const std::string& check_endpoint) {
  return std::make_unique<HttpReadinessProbe>(proxy_url, check_endpoint);
}

ProbeFactory DefaultProbeFactory() {
  return [](const ModelConfig& model) {
    return MakeHttpReadinessProbe(model.proxy, model.check_endpoint);
  };
}

PollBackoff::PollBackoff(std::chrono::milliseconds first, std::chrono::milliseconds max,
                         double factor)
    : next_ms_(static_cast<double>(first.count())),
      max_ms_(static_cast<double>(std::max(first, max).count())),
      factor_(std::max(factor, 1.0)) {}

std::chrono::milliseconds PollBackoff::Next() {
  auto now = std::chrono::milliseconds(static_cast<long>(next_ms_));
  next_ms_ = std::min(next_ms_ * factor_, max_ms_);
  return now;
}

}  // namespace swapd
