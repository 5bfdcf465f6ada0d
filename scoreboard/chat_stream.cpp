#include "scoreboard/chat_stream.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"

namespace swapd {
namespace {

double NumberOr(const nlohmann::json& object, const char* key, double fallback) {
  auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string ErrorMessage(const nlohmann::json& error) {
  if (error.is_string()) return error.get<std::string>();
  if (error.is_object() && error.contains("message") && error["message"].is_string()) {
    return error["message"].get<std::string>();
  }
  return JsonText(error);
}

}  // namespace

void ChatStreamReader::Feed(std::string_view bytes, double at_ms) {
  pending_.append(bytes);
  size_t begin = 0;
  for (size_t end; (end = pending_.find('\n', begin)) != std::string::npos; begin = end + 1) {
    std::string_view line(pending_.data() + begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.rfind("data:", 0) != 0) continue;  // blank separators, comments, event: lines
    line.remove_prefix(5);
    if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    Event(line, at_ms);
  }
  pending_.erase(0, begin);
}

void ChatStreamReader::Event(std::string_view data, double at_ms) {
  if (data == "[DONE]") {
    stats_.done = true;
    return;
  }
  const nlohmann::json event = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!event.is_object()) return;
  if (event.contains("error")) {
    stats_.error = ErrorMessage(event["error"]);
    return;
  }
  if (auto choices = event.find("choices"); choices != event.end() && choices->is_array()) {
    for (const nlohmann::json& choice : *choices) {
      auto delta = choice.find("delta");
      if (delta == choice.end() || !delta->is_object()) continue;
      bool piece = false;
      for (const char* key : {"content", "reasoning_content"}) {
        auto text = delta->find(key);
        if (text == delta->end() || !text->is_string() || text->get<std::string>().empty()) {
          continue;
        }
        piece = true;
        if (std::string_view(key) == "content") stats_.text += text->get<std::string>();
      }
      if (!piece) continue;
      if (stats_.pieces++ == 0) stats_.first_piece_ms = at_ms;
      stats_.last_piece_ms = at_ms;
    }
  }
  if (auto usage = event.find("usage"); usage != event.end() && usage->is_object()) {
    stats_.usage_prompt_tokens = static_cast<int>(NumberOr(*usage, "prompt_tokens", -1));
    stats_.usage_completion_tokens = static_cast<int>(NumberOr(*usage, "completion_tokens", -1));
  }
  if (auto timings = event.find("timings"); timings != event.end() && timings->is_object()) {
    stats_.timings_prompt_tps = NumberOr(*timings, "prompt_per_second", -1);
    stats_.timings_decode_tps = NumberOr(*timings, "predicted_per_second", -1);
    stats_.timings_cache_n = static_cast<int>(NumberOr(*timings, "cache_n", -1));
    stats_.timings_prompt_n = static_cast<int>(NumberOr(*timings, "prompt_n", -1));
  }
}

RunMeasure MeasureRun(const ChatStreamStats& stats) {
  RunMeasure m;
  m.ttft_ms = stats.first_piece_ms;
  if (stats.timings_prompt_tps > 0 && stats.timings_decode_tps > 0) {
    m.prefill_tps = stats.timings_prompt_tps;
    m.decode_tps = stats.timings_decode_tps;
    m.from_timings = true;
    return m;
  }
  const double span_ms = stats.last_piece_ms - stats.first_piece_ms;
  if (stats.pieces > 1 && span_ms > 0) m.decode_tps = (stats.pieces - 1) * 1000.0 / span_ms;
  if (stats.usage_prompt_tokens > 0 && m.ttft_ms > 0) {
    m.prefill_tps = stats.usage_prompt_tokens * 1000.0 / m.ttft_ms;
  }
  return m;
}

}  // namespace swapd
