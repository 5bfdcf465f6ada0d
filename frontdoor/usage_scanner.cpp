#include "frontdoor/usage_scanner.h"

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "frontdoor/json_scan.h"

namespace swapd {
namespace {

enum Slot {
  kPromptTokens,  // usage.*
  kCompletionTokens,
  kInputTokens,
  kOutputTokens,
  kPromptPerSecond,  // timings.*
  kPredictedPerSecond,
  kCacheN,
  kPromptN,
  kPredictedN,
  kSlotCount
};
constexpr int kFirstTimingsSlot = kPromptPerSecond;

// The slot of a key of "timings" (or of "usage"), or -1.
int SlotOf(bool timings, std::string_view key) {
  if (timings) {
    if (key == "prompt_per_second") return kPromptPerSecond;
    if (key == "predicted_per_second") return kPredictedPerSecond;
    if (key == "cache_n") return kCacheN;
    if (key == "prompt_n") return kPromptN;
    if (key == "predicted_n") return kPredictedN;
    return -1;
  }
  if (key == "prompt_tokens") return kPromptTokens;
  if (key == "completion_tokens") return kCompletionTokens;
  if (key == "input_tokens") return kInputTokens;  // Anthropic-style /v1/messages
  if (key == "output_tokens") return kOutputTokens;
  return -1;
}

// Keeps the number tokens of the top-level "usage" and "timings" objects as the scan goes by.
// What it keeps is what a parsed document would hold: the last of duplicate keys wins, and a
// "usage" that is not an object carries nothing.
class UsageFields : public JsonHandler {
 public:
  bool top_is_object = false;
  bool usage_object = false;
  bool timings_object = false;
  std::array<std::string_view, kSlotCount> numbers;  // empty: absent, or not a number

  void Value(size_t depth, JsonKind kind, std::string_view token) override {
    if (depth == 0) top_is_object = kind == JsonKind::kObject;
    if (depth == 1 && kind == JsonKind::kObject && section_ != Section::kOther) {
      in_section_ = true;
      (section_ == Section::kTimings ? timings_object : usage_object) = true;
    }
    if (depth == 2 && in_section_ && slot_ >= 0) {
      numbers[slot_] = kind == JsonKind::kNumber ? token : std::string_view();
    }
    slot_ = -1;
  }
  void Key(size_t depth, std::string_view key) override {
    if (depth == 1) {
      section_ = key == "usage"     ? Section::kUsage
                 : key == "timings" ? Section::kTimings
                                    : Section::kOther;
      if (section_ != Section::kOther) {  // a repeated key replaces the earlier object
        const bool timings = section_ == Section::kTimings;
        (timings ? timings_object : usage_object) = false;
        for (int i = timings ? kFirstTimingsSlot : 0;
             i < (timings ? kSlotCount : kFirstTimingsSlot); ++i) {
          numbers[i] = {};
        }
      }
    } else if (depth == 2 && in_section_) {
      slot_ = SlotOf(section_ == Section::kTimings, key);
    }
  }
  void End(size_t depth) override {
    if (depth == 1) in_section_ = false;
  }
  // Only the top-level object and its "usage" and "timings" objects are read; the rest (the
  // answer's choices, which may be long) is passed over.
  bool Skip(size_t depth) override {
    return depth >= 2 || (depth == 1 && section_ == Section::kOther);
  }

 private:
  enum class Section { kOther, kUsage, kTimings };

  Section section_ = Section::kOther;  // of the current top-level key
  bool in_section_ = false;            // inside the object of "usage" or "timings"
  int slot_ = -1;                      // of the current key inside it
};

void Read(std::string_view token, std::optional<double>& out) {
  if (token.empty()) return;
  const JsonNumber n = ReadJsonNumber(token);
  if (n.kind == JsonNumber::Kind::kSigned) out = static_cast<double>(n.i);
  if (n.kind == JsonNumber::Kind::kUnsigned) out = static_cast<double>(n.u);
  if (n.kind == JsonNumber::Kind::kFloat) out = n.f;
}

// A count: an integer, or a float that fits (converting one that does not, e.g. 1e300, is
// undefined behaviour).
void Read(std::string_view token, std::optional<int64_t>& out) {
  if (token.empty()) return;
  const JsonNumber n = ReadJsonNumber(token);
  if (n.kind == JsonNumber::Kind::kUnsigned) {
    if (n.u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      out = static_cast<int64_t>(n.u);
    }
  } else if (n.kind == JsonNumber::Kind::kSigned) {
    out = n.i;
  } else if (n.kind == JsonNumber::Kind::kFloat) {
    // 2^63 is exactly representable; every double below it converts.
    if (n.f >= -9223372036854775808.0 && n.f < 9223372036854775808.0) {
      out = static_cast<int64_t>(n.f);
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
  UsageFields fields;
  if (ScanJson(json_text, fields) || !fields.top_is_object) return;
  const auto& n = fields.numbers;
  if (fields.usage_object) {
    Read(n[kPromptTokens], usage_.prompt_tokens);
    Read(n[kCompletionTokens], usage_.completion_tokens);
    Read(n[kInputTokens], usage_.prompt_tokens);
    Read(n[kOutputTokens], usage_.completion_tokens);
  }
  if (fields.timings_object) {
    Read(n[kPromptPerSecond], usage_.prompt_per_second);
    Read(n[kPredictedPerSecond], usage_.predicted_per_second);
    Read(n[kCacheN], usage_.cached_tokens);
    Read(n[kPromptN], usage_.prompt_processed);
    if (!usage_.prompt_tokens) Read(n[kPromptN], usage_.prompt_tokens);
    if (!usage_.completion_tokens) Read(n[kPredictedN], usage_.completion_tokens);
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
