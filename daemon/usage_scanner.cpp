#include "daemon/usage_scanner.h"

#include <nlohmann/json.hpp>

namespace swapd {
namespace {

template <typename T>
void ReadNumber(const nlohmann::json& object, const char* key, std::optional<T>& out) {
  auto it = object.find(key);
  if (it != object.end() && it->is_number()) out = it->get<T>();
}

}  // namespace

void UsageScanner::Feed(std::string_view bytes) {
  if (!event_stream_) {
    if (overflow_) return;
    if (buffer_.size() + bytes.size() > kMaxBuffered) {
      overflow_ = true;
      buffer_.clear();
      return;
    }
    buffer_.append(bytes);
    return;
  }
  buffer_.append(bytes);
  ScanEvents();
  if (buffer_.size() > kMaxBuffered) buffer_.clear();  // one absurdly long event: skip it
}

void UsageScanner::ScanEvents() {
  size_t start = 0;
  for (;;) {
    size_t end = buffer_.find('\n', start);
    if (end == std::string::npos) break;
    std::string_view line(buffer_.data() + start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, 5) != "data:") continue;
    line.remove_prefix(5);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    // Only events that can carry the counts are parsed; the rest pass by untouched.
    if (line.find("\"usage\"") == std::string_view::npos &&
        line.find("\"timings\"") == std::string_view::npos) {
      continue;
    }
    ScanDocument(line);
  }
  buffer_.erase(0, start);
}

void UsageScanner::ScanDocument(std::string_view json_text) {
  nlohmann::json doc = nlohmann::json::parse(json_text.begin(), json_text.end(), nullptr,
                                             /*allow_exceptions=*/false);
  if (!doc.is_object()) return;
  if (auto it = doc.find("usage"); it != doc.end() && it->is_object()) {
    ReadNumber(*it, "prompt_tokens", usage_.prompt_tokens);
    ReadNumber(*it, "completion_tokens", usage_.completion_tokens);
    // Anthropic-style /v1/messages
    ReadNumber(*it, "input_tokens", usage_.prompt_tokens);
    ReadNumber(*it, "output_tokens", usage_.completion_tokens);
  }
  if (auto it = doc.find("timings"); it != doc.end() && it->is_object()) {
    ReadNumber(*it, "prompt_per_second", usage_.prompt_per_second);
    ReadNumber(*it, "predicted_per_second", usage_.predicted_per_second);
    ReadNumber(*it, "cache_n", usage_.cached_tokens);
    if (!usage_.prompt_tokens) ReadNumber(*it, "prompt_n", usage_.prompt_tokens);
    if (!usage_.completion_tokens) ReadNumber(*it, "predicted_n", usage_.completion_tokens);
  }
}

Usage UsageScanner::Finish() {
  if (event_stream_) {
    buffer_.push_back('\n');
    ScanEvents();
  } else if (!overflow_ && !buffer_.empty()) {
    ScanDocument(buffer_);
  }
  buffer_.clear();
  return usage_;
}

}  // namespace swapd
