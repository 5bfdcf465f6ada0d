#include "daemon/usage_scanner.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

namespace swapd {
namespace {

void ReadNumber(const nlohmann::json& object, const char* key, std::optional<double>& out) {
  auto it = object.find(key);
  if (it != object.end() && it->is_number()) out = it->get<double>();
}

// A count: an integer, or a float that fits (converting one that does not, e.g. 1e300, is
// undefined behaviour).
void ReadNumber(const nlohmann::json& object, const char* key, std::optional<int64_t>& out) {
  auto it = object.find(key);
  if (it == object.end()) return;
  if (it->is_number_unsigned()) {
    uint64_t value = it->get<uint64_t>();
    if (value <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      out = static_cast<int64_t>(value);
    }
  } else if (it->is_number_integer()) {
    out = it->get<int64_t>();
  } else if (it->is_number_float()) {
    double value = it->get<double>();
    // 2^63 is exactly representable; every double below it converts.
    if (value >= -9223372036854775808.0 && value < 9223372036854775808.0) {
      out = static_cast<int64_t>(value);
    }
  }
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
  if (buffer_.size() > kMaxBuffered) {  // one absurdly long event: skip it, to its end
    buffer_.clear();
    scanned_ = 0;
    skipping_ = true;
  }
}

void UsageScanner::ScanEvents() {
  size_t start = 0;
  size_t from = scanned_;
  for (;;) {
    size_t end = buffer_.find('\n', from);
    if (end == std::string::npos) break;
    std::string_view line(buffer_.data() + start, end - start);
    start = from = end + 1;
    // The same lines are skipped however the stream is cut: those longer than kMaxBuffered.
    if (skipping_) {
      skipping_ = false;
      continue;
    }
    if (line.size() > kMaxBuffered) continue;
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
  scanned_ = buffer_.size();
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
    ReadNumber(*it, "prompt_n", usage_.prompt_processed);
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
