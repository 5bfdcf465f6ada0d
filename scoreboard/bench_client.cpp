#include "scoreboard/bench_client.h"

#include <chrono>

#include "base/json_text.h"
#include "base/proxy_url.h"
#include "http/http_client.h"

namespace swapd {
namespace {

// A model's load and a long prompt on a CPU may take many minutes; the bench waits for them.
constexpr auto kReadTimeout = std::chrono::minutes(30);
constexpr auto kConnectTimeout = std::chrono::seconds(10);

HttpClient ClientFor(const std::string& base_url) {
  UpstreamConnection::Timeouts timeouts;
  timeouts.connect = timeouts.tls_handshake = timeouts.write = kConnectTimeout;
  timeouts.read = kReadTimeout;
  return HttpClient(ParseProxyUrl(base_url), timeouts);
}

ClientRequest RequestFor(std::string method, std::string path, const std::string& api_key) {
  ClientRequest request;
  request.method = std::move(method);
  request.target = std::move(path);
  if (!api_key.empty()) request.headers.Add("Authorization", "Bearer " + api_key);
  return request;
}

Status HttpFailure(const std::string& what, const UpstreamFailure& failure) {
  return Status::Error(ErrorCode::kUnavailable, what + ": " + failure.text);
}

// swapd's OpenAI-shaped error body, else the start of the body.
std::string ErrorText(int status, const std::string& body) {
  const nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_object() && json.contains("error") && json["error"].is_object() &&
      json["error"].contains("message") && json["error"]["message"].is_string()) {
    return json["error"]["message"].get<std::string>();
  }
  return "HTTP " + std::to_string(status) + ": " + body.substr(0, 300);
}

}  // namespace

const ModelState* FindModelState(const std::vector<ModelState>& models, const std::string& id) {
  for (const ModelState& m : models) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

BenchClient::BenchClient(std::string base_url, std::string api_key)
    : base_url_(std::move(base_url)), api_key_(std::move(api_key)) {}

Result<nlohmann::json> BenchClient::GetJson(const std::string& path) const {
  ClientResponse res;
  UpstreamFailure failure;
  if (!ClientFor(base_url_).Fetch(RequestFor("GET", path, api_key_), res, failure)) {
    return HttpFailure("GET " + base_url_ + path, failure);
  }
  if (res.status != 200) {
    return Status::Error(ErrorCode::kBackendFailed,
                         "GET " + path + ": " + ErrorText(res.status, res.body));
  }
  nlohmann::json json = nlohmann::json::parse(res.body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return Status::Error(ErrorCode::kBackendFailed, "GET " + path + ": the answer is not JSON");
  }
  return json;
}

Status BenchClient::Post(const std::string& path, const std::string& body) const {
  ClientRequest request = RequestFor("POST", path, api_key_);
  request.headers.Add("Content-Type", "application/json");
  request.body = body;
  ClientResponse res;
  UpstreamFailure failure;
  if (!ClientFor(base_url_).Fetch(request, res, failure)) {
    return HttpFailure("POST " + base_url_ + path, failure);
  }
  if (res.status != 200) {
    return Status::Error(ErrorCode::kBackendFailed,
                         "POST " + path + ": " + ErrorText(res.status, res.body));
  }
  return Status::Ok();
}

bool BenchClient::Healthy() const {
  UpstreamConnection::Timeouts timeouts;
  timeouts.connect = timeouts.tls_handshake = timeouts.write = std::chrono::seconds(1);
  timeouts.read = std::chrono::seconds(2);
  ClientResponse res;
  UpstreamFailure failure;
  return HttpClient(ParseProxyUrl(base_url_), timeouts)
             .Fetch(RequestFor("GET", "/health", ""), res, failure) &&
         res.status == 200;
}

Result<std::vector<std::string>> BenchClient::ListModels() const {
  Result<nlohmann::json> list = GetJson("/v1/models");
  if (!list.ok()) return list.status();
  std::vector<std::string> ids;
  const nlohmann::json& data = list.value().contains("data") ? list.value()["data"] : nullptr;
  if (!data.is_array()) {
    return Status::Error(ErrorCode::kBackendFailed, "GET /v1/models: no \"data\" list");
  }
  for (const nlohmann::json& item : data) {
    if (item.contains("id") && item["id"].is_string()) ids.push_back(item["id"].get<std::string>());
  }
  return ids;
}

Result<nlohmann::json> BenchClient::ListEntry(const std::string& model) const {
  Result<nlohmann::json> list = GetJson("/v1/models");
  if (!list.ok()) return list.status();
  for (const nlohmann::json& item : list.value().value("data", nlohmann::json::array())) {
    if (item.is_object() && item.value("id", "") == model) return item;
  }
  return nlohmann::json();
}

Result<std::vector<ModelState>> BenchClient::Models() const {
  Result<nlohmann::json> api = GetJson("/api/models");
  if (!api.ok()) return api.status();
  std::vector<ModelState> models;
  try {
    for (const nlohmann::json& item : api.value().at("models")) {
      ModelState m;
      m.id = item.at("id").get<std::string>();
      m.state = item.value("state", "");
      m.pid = item.value("pid", 0);
      m.last_error = item.value("last_error", "");
      m.last_log_lines = item.value("last_log_lines", std::vector<std::string>{});
      m.start_failures = item.value("start_failures", 0);
      m.crashes = item.value("crashes", 0);
      m.definition = item.value("definition", "");
      const nlohmann::json memory = item.value("memory", nlohmann::json::object());
      if (memory.is_object()) {
        m.prefetch = memory.value("prefetch", false);
        const nlohmann::json files = memory.value("files", nlohmann::json::object());
        if (files.is_object()) m.files = files.value("paths", std::vector<std::string>{});
      }
      m.slot_cache = item.value("slot_cache", false);
      const nlohmann::json load = item.value("last_load_seconds", nlohmann::json());
      if (load.is_number()) m.last_load_seconds = load.get<double>();
      models.push_back(std::move(m));
    }
  } catch (const nlohmann::json::exception& e) {
    return Status::Error(ErrorCode::kBackendFailed, std::string("GET /api/models: ") + e.what());
  }
  return models;
}

Result<int> BenchClient::DaemonPid() const {
  Result<nlohmann::json> version = GetJson("/api/version");
  if (!version.ok()) return version.status();
  const nlohmann::json pid = version.value().value("pid", nlohmann::json());
  return pid.is_number_integer() ? pid.get<int>() : 0;
}

Status BenchClient::UnloadAll() const { return Post("/api/models/unload", ""); }

Status BenchClient::Load(const std::string& model) const {
  return Post("/models/load", JsonText(nlohmann::json{{"model", model}}));
}

Result<ChatStreamStats> BenchClient::StreamChat(const nlohmann::json& body) const {
  ClientRequest request = RequestFor("POST", "/v1/chat/completions", api_key_);
  request.headers.Add("Content-Type", "application/json");
  request.headers.Add("Accept", "text/event-stream");
  request.body = JsonText(body);
  ChatStreamReader reader;
  int status = 0;
  std::string error_body;  // the body of a non-200 answer
  UpstreamFailure failure;
  const auto sent = std::chrono::steady_clock::now();
  const bool whole = ClientFor(base_url_).Stream(
      request,
      [&status](const ClientResponse& head) {
        status = head.status;
        return true;
      },
      [&](std::string_view piece) {
        if (status != 200) {
          error_body.append(piece);
          return true;
        }
        const double at_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent)
                .count();
        reader.Feed(piece, at_ms);
        return true;
      },
      failure);
  if (status != 0 && status != 200) {
    return Status::Error(ErrorCode::kBackendFailed, ErrorText(status, error_body));
  }
  if (!whole) {
    // The stream was cut (a backend that died without swapd's error event): keep what came.
    if (status == 200 && reader.stats().error.empty()) {
      ChatStreamStats stats = reader.stats();
      stats.error = "the stream broke off: " + failure.text;
      return stats;
    }
    if (status != 200) return HttpFailure("POST /v1/chat/completions", failure);
  }
  return reader.stats();
}

}  // namespace swapd
