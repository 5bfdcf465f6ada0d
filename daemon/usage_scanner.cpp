#include "daemon/usage_scanner.h"

#include <array>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace swapd {
namespace {

// One number of a document as the parser gave it (a key present with another kind of value is
// kNone, as is an absent one).
struct Number {
  enum class Kind { kNone, kSigned, kUnsigned, kFloat } kind = Kind::kNone;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
};

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
int SlotOf(bool timings, const std::string& key) {
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

// A SAX handler that keeps the numbers of the top-level "usage" and "timings" objects and builds
// nothing else: a response's JSON is read without a document tree. What it keeps is what a parsed
// document would hold: the last of duplicate keys wins, and a "usage" that is not an object
// carries nothing.
class UsageSax {
 public:
  bool top_is_object = false;
  bool usage_object = false;
  bool timings_object = false;
  std::array<Number, kSlotCount> numbers;

  bool null() { return Scalar(Number()); }
  bool boolean(bool) { return Scalar(Number()); }
  bool number_integer(int64_t value) {
    Number n;
    n.kind = Number::Kind::kSigned;
    n.i = value;
    return Scalar(n);
  }
  bool number_unsigned(uint64_t value) {
    Number n;
    n.kind = Number::Kind::kUnsigned;
    n.u = value;
    return Scalar(n);
  }
  bool number_float(double value, const std::string&) {
    Number n;
    n.kind = Number::Kind::kFloat;
    n.f = value;
    return Scalar(n);
  }
  bool string(std::string&) { return Scalar(Number()); }
  bool binary(nlohmann::json::binary_t&) { return Scalar(Number()); }
  bool start_object(size_t) { return Open(true); }
  bool start_array(size_t) { return Open(false); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(std::string& key) {
    if (depth_ == 1) {
      section_ = key == "usage"     ? Section::kUsage
                 : key == "timings" ? Section::kTimings
                                    : Section::kOther;
      if (section_ != Section::kOther) {  // a repeated key replaces the earlier object
        const bool timings = section_ == Section::kTimings;
        (timings ? timings_object : usage_object) = false;
        for (int i = timings ? kFirstTimingsSlot : 0;
             i < (timings ? kSlotCount : kFirstTimingsSlot); ++i) {
          numbers[i] = Number();
        }
      }
    } else if (depth_ == 2 && in_section_) {
      slot_ = SlotOf(section_ == Section::kTimings, key);
    }
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

 private:
  enum class Section { kOther, kUsage, kTimings };

  // A value directly in "usage" or "timings" fills its slot.
  bool Scalar(const Number& n) {
    if (depth_ == 2 && in_section_ && slot_ >= 0) numbers[slot_] = n;
    slot_ = -1;
    return true;
  }
  bool Open(bool object) {
    if (depth_ == 0) top_is_object = object;
    if (depth_ == 1 && object && section_ != Section::kOther) {
      in_section_ = true;
      (section_ == Section::kTimings ? timings_object : usage_object) = true;
    }
    if (depth_ == 2 && in_section_ && slot_ >= 0) numbers[slot_] = Number();
    slot_ = -1;
    ++depth_;
    return true;
  }
  bool Close() {
    --depth_;
    if (depth_ == 1) in_section_ = false;
    return true;
  }

  size_t depth_ = 0;
  Section section_ = Section::kOther;  // of the current top-level key
  bool in_section_ = false;            // inside the object of "usage" or "timings"
  int slot_ = -1;                      // of the current key inside it
};

void Read(const Number& n, std::optional<double>& out) {
  if (n.kind == Number::Kind::kSigned) out = static_cast<double>(n.i);
  if (n.kind == Number::Kind::kUnsigned) out = static_cast<double>(n.u);
  if (n.kind == Number::Kind::kFloat) out = n.f;
}

// A count: an integer, or a float that fits (converting one that does not, e.g. 1e300, is
// undefined behaviour).
void Read(const Number& n, std::optional<int64_t>& out) {
  if (n.kind == Number::Kind::kUnsigned) {
    if (n.u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      out = static_cast<int64_t>(n.u);
    }
  } else if (n.kind == Number::Kind::kSigned) {
    out = n.i;
  } else if (n.kind == Number::Kind::kFloat) {
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
  UsageSax sax;
  if (!nlohmann::json::sax_parse(json_text.begin(), json_text.end(), &sax) || !sax.top_is_object) {
    return;
  }
  const auto& n = sax.numbers;
  if (sax.usage_object) {
    Read(n[kPromptTokens], usage_.prompt_tokens);
    Read(n[kCompletionTokens], usage_.completion_tokens);
    Read(n[kInputTokens], usage_.prompt_tokens);
    Read(n[kOutputTokens], usage_.completion_tokens);
  }
  if (sax.timings_object) {
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
