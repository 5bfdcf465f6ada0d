#include "backends/readiness_probe.h"

#include <httplib.h>

#include <algorithm>
#include <exception>

#include "base/proxy_url.h"

namespace swapd {
namespace {

class HttpReadinessProbe : public ReadinessProbe {
 public:
  HttpReadinessProbe(const std::string& proxy_url, const std::string& check_endpoint) {
    const ProxyUrl url = ParseProxyUrl(proxy_url);
    base_ = url.origin;
    path_ = url.path_prefix + (check_endpoint.empty() || check_endpoint[0] != '/' ? "/" : "") +
            check_endpoint;
    try {
      client_ = std::make_unique<httplib::Client>(base_);
      client_->set_connection_timeout(std::chrono::seconds(1));
      client_->set_read_timeout(std::chrono::seconds(1));
      client_->set_write_timeout(std::chrono::seconds(1));
    } catch (const std::exception& e) {
      error_ = std::string("bad proxy URL: ") + e.what();
    }
  }

  ProbeResult Check() override {
    if (!client_ || !client_->is_valid()) {
      return {false, error_.empty() ? "bad proxy URL \"" + base_ + "\"" : error_};
    }
    try {
      httplib::Result res = client_->Get(path_.c_str());
      if (!res) return {false, httplib::to_string(res.error())};
      return {res->status == 200, "HTTP " + std::to_string(res->status)};
    } catch (const std::exception& e) {
      return {false, e.what()};
    }
  }

  std::string Target() const override { return base_ + path_; }

 private:
  std::string base_;
  std::string path_;
  std::string error_;
  std::unique_ptr<httplib::Client> client_;
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
