#include "tests/support/http_wait.h"

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

namespace swapd::testing {
namespace {

using Clock = std::chrono::steady_clock;

httplib::Client MakeClient(const std::string& base_url, std::chrono::milliseconds timeout) {
  httplib::Client client(base_url);
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  client.set_write_timeout(timeout);
  return client;
}

HttpReply ToReply(const httplib::Result& result) {
  HttpReply reply;
  if (!result) {
    reply.error = httplib::to_string(result.error());
    return reply;
  }
  reply.status = result->status;
  reply.body = result->body;
  reply.content_type = result->get_header_value("Content-Type");
  return reply;
}

}  // namespace

std::string HttpReply::Describe() const {
  if (status < 0) return "no answer: " + error;
  return std::to_string(status) + " " + body;
}

HttpReply HttpGet(const std::string& base_url, const std::string& path,
                  std::chrono::milliseconds timeout) {
  httplib::Client client = MakeClient(base_url, timeout);
  return ToReply(client.Get(path));
}

HttpReply HttpPost(const std::string& base_url, const std::string& path, const std::string& body,
                   const std::string& content_type, std::chrono::milliseconds timeout) {
  httplib::Client client = MakeClient(base_url, timeout);
  return ToReply(client.Post(path, body, content_type));
}

PollResult PollUntil(const std::string& base_url, const std::string& path,
                     const std::function<bool(const HttpReply&)>& done,
                     std::chrono::milliseconds deadline, std::chrono::milliseconds interval) {
  const Clock::time_point end = Clock::now() + deadline;
  PollResult result;
  for (;;) {
    ++result.attempts;
    const auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
    result.last = HttpGet(base_url, path, std::max(remaining, std::chrono::milliseconds(100)));
    if (done(result.last)) {
      result.met = true;
      return result;
    }
    if (Clock::now() + interval >= end) return result;
    std::this_thread::sleep_for(interval);
  }
}

PollResult WaitForStatus(const std::string& base_url, const std::string& path, int status,
                         std::chrono::milliseconds deadline) {
  return PollUntil(
      base_url, path, [status](const HttpReply& r) { return r.status == status; }, deadline);
}

double MetricSample(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

std::string ErrorMessage(const std::string& body) {
  auto doc = nlohmann::json::parse(body, nullptr, false);
  if (!doc.is_object() || !doc.contains("error") || !doc["error"].is_object() ||
      !doc["error"].contains("message") || !doc["error"]["message"].is_string()) {
    return "";
  }
  return doc["error"]["message"].get<std::string>();
}

}  // namespace swapd::testing
