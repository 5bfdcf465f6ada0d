// GET /models/sse: llama.cpp's router-mode stream of model events, for clients written against
// llama-server's router. Each frame is `data: {"model": <id>, "event": "model_status", "data":
// {...}}`, data being what GET /models says of the model's status ({"value": "unloaded" |
// "loading" | "loaded"}, a failed start {"value": "unloaded", "failed": true}), and, while it
// loads, `progress {stages, current, value 0..1}` as llama.cpp reports a loading model (swapd's
// backends load one model per process: the one stage "text_model"). It is the /api/events feed
// (observe/event_feed.h) seen through llama.cpp's words: the stream subscribes to the
// modelStatus and loading events of the same EventHub and turns them into these frames. On
// connect: each configured model's status. Behind apiKeys as every route but /health.
#include "api/model_sse_routes.h"

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "api/event_response.h"
#include "base/json_text.h"
#include "observe/event_hub.h"

namespace swapd {
namespace {

std::string Frame(const std::string& model, const nlohmann::json& data) {
  nlohmann::json frame = {{"model", model}, {"event", "model_status"}, {"data", data}};
  return "data: " + JsonText(frame) + "\n\n";
}

// llama.cpp's status value for llama-swap's state; empty for one it has no word for (stopping:
// the model is still loaded until it is stopped).
std::string StatusValue(const std::string& state) {
  if (state == "stopped") return "unloaded";
  if (state == "starting") return "loading";
  if (state == "ready") return "loaded";
  return "";
}

// One stream's state, on the thread that writes it.
struct Reader {
  std::map<std::string, std::string> told;  // model -> the status value last sent

  // The frames for one of the hub's frames ("event:message\ndata:{type, data: "<json>"}").
  std::string Translate(const std::string& hub_frame) {
    const size_t at = hub_frame.find("data:");
    if (at == std::string::npos) return "";
    const nlohmann::json envelope = nlohmann::json::parse(hub_frame.substr(at + 5), nullptr, false);
    if (!envelope.is_object() || !envelope.contains("type")) return "";
    const std::string type = envelope.value("type", "");
    if (type != "modelStatus" && type != "loading") return "";
    const nlohmann::json data =
        nlohmann::json::parse(envelope.value("data", std::string()), nullptr, false);
    std::string out;
    if (type == "modelStatus" && data.is_array()) {
      for (const nlohmann::json& m : data) {
        if (!m.is_object() || !m.value("peerID", std::string()).empty()) continue;
        const std::string id = m.value("id", "");
        const std::string value = StatusValue(m.value("state", ""));
        if (value.empty() || told[id] == value) continue;
        told[id] = value;
        nlohmann::json status = {{"value", value}};
        if (m.contains("last_error")) status["failed"] = true;
        out += Frame(id, status);
      }
    } else if (type == "loading" && data.is_object()) {
      const std::string id = data.value("model", "");
      const std::string stage = data.value("stage", "");
      nlohmann::json status;
      if (stage == "ready") {
        status = {{"value", "loaded"}};
      } else if (stage == "failed") {
        status = {{"value", "unloaded"}, {"failed", true}};
      } else {
        const nlohmann::json progress = data.value("progress", nlohmann::json());
        status = {{"value", "loading"},
                  {"progress",
                   {{"stages", {"text_model"}},
                    {"current", "text_model"},
                    {"value", progress.is_number() ? progress : nlohmann::json(0.0)}}}};
      }
      // modelStatus may have told "loaded" already: a status goes out once, progress each time.
      if (!status.contains("progress") && told[id] == status["value"]) return out;
      told[id] = status["value"];
      out += Frame(id, status);
    }
    return out;
  }
};

}  // namespace

void AddModelSseRoute(FrontDoor& door, std::shared_ptr<EventHub> events) {
  door.AddRoute("GET", "/models/sse",
                [&door, events](const HttpRequest&, HttpResponse& res, RequestContext&) {
                  ServeEvents(
                      door, res, events->Subscribe({}, {}, {"modelStatus", "loading"}),
                      std::chrono::milliseconds(0),
                      [reader = Reader{}](const EventHub::Subscription::Batch& batch) mutable {
                        std::string text;
                        for (const EventFrame& frame : batch.frames) {
                          text += reader.Translate(*frame);
                        }
                        return text;
                      });
                });
}

}  // namespace swapd
