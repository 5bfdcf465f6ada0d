#include "frontdoor/json_scan.h"

#include "base/text.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace swapd {
namespace {

// Bytes a string may hold as they are: not the quote, the backslash, a control character, or the
// start of a multi-byte UTF-8 sequence (checked on its own).
constexpr std::array<bool, 256> kPlainStringByte = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
  return plain;
}();

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The four hex digits at `s[at]`, or -1.
int ReadHex4(std::string_view s, size_t at) {
  if (at + 4 > s.size()) return -1;
  int value = 0;
  for (size_t i = at; i < at + 4; ++i) {
    int digit = HexDigitValue(s[i]);
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

bool IsHighSurrogate(int cp) { return cp >= 0xD800 && cp <= 0xDBFF; }
bool IsLowSurrogate(int cp) { return cp >= 0xDC00 && cp <= 0xDFFF; }

// Longer than this, a number without an exponent may be too large for a double (10^308 has 309
// digits); shorter, it never is, so it need not be converted to be checked.
constexpr size_t kSafeNumberLength = 300;

class Scanner {
 public:
  Scanner(std::string_view text, JsonHandler& handler, size_t max_depth)
      : s_(text), handler_(handler), max_depth_(max_depth) {}

  std::optional<JsonScanError> Run() {
    if (!s_.empty() && static_cast<unsigned char>(s_[0]) == 0xEF) {
      if (!s_.starts_with("\xEF\xBB\xBF")) {
        Fail("an incomplete UTF-8 byte order mark");
        return error_;
      }
      pos_ = 3;
    }
    for (;;) {
      bool opened = false;
      if (!ScanValue(&opened)) return error_;
      if (opened) continue;  // the first element or member value of a container follows
      bool done = false;
      if (!AfterValue(&done)) return error_;
      if (done) return std::nullopt;
    }
  }

 private:
  void SkipSpace() {
    const char* p = s_.data() + pos_;
    const char* const end = s_.data() + s_.size();
    while (p != end && IsSpace(*p)) ++p;
    pos_ = static_cast<size_t>(p - s_.data());
  }

  bool Fail(const char* what, JsonScanError::Kind kind = JsonScanError::Kind::kMalformed) {
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    error_.kind = kind;
    error_.offset = pos_;
    error_.message = "at line " + std::to_string(line) + ", column " +
                     std::to_string(pos_ - line_start + 1) + ": " + what;
    return false;
  }

  // A value at the current depth. A scalar is read whole; an object or array is opened (and an
  // empty one closed again, leaving *opened false); an object's first key is read too.
  bool ScanValue(bool* opened) {
    SkipSpace();
    if (pos_ == s_.size()) return Fail("unexpected end of input; expected a value");
    const size_t depth = stack_.size();
    const char c = s_[pos_];
    if (c == '{' || c == '[') {
      if (depth + 1 > max_depth_) {
        return Fail("arrays and objects nest too deep", JsonScanError::Kind::kTooDeep);
      }
      const bool object = c == '{';
      handler_.Value(depth, object ? JsonKind::kObject : JsonKind::kArray, {});
      if (handler_.Skip(depth)) {
        if (!PassOver()) return false;
        handler_.End(depth);
        return true;
      }
      ++pos_;
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == (object ? '}' : ']')) {
        ++pos_;
        handler_.End(depth);
        return true;
      }
      stack_.push_back(c);
      *opened = true;
      return !object || ScanKey();
    }
    std::string_view token;
    if (c == '"') {
      if (!ScanString(&token)) return false;
      handler_.Value(depth, JsonKind::kString, token);
    } else if (c == '-' || IsDigit(c)) {
      if (!ScanNumber(&token)) return false;
      handler_.Value(depth, JsonKind::kNumber, token);
    } else if (c == 't' || c == 'f' || c == 'n') {
      std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : "null";
      if (s_.substr(pos_, word.size()) != word) return Fail("an invalid literal");
      pos_ += word.size();
      handler_.Value(depth, c == 'n' ? JsonKind::kNull : JsonKind::kBoolean, word);
    } else {
      return Fail("expected a value");
    }
    return true;
  }

  // From the bracket that opens an object or array to past the one that closes it, minding only
  // strings (a bracket inside one does not count) and nesting.
  bool PassOver() {
    size_t nesting = 0;
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') {
        while (pos_ < s_.size() && s_[pos_] != '"') pos_ += s_[pos_] == '\\' ? 2 : 1;
        if (pos_ >= s_.size()) break;
        ++pos_;
      } else if (c == '{' || c == '[') {
        ++nesting;
      } else if ((c == '}' || c == ']') && --nesting == 0) {
        return true;
      }
    }
    pos_ = s_.size();
    return Fail("unexpected end of input inside an array or object");
  }

  // After a complete value: closes the containers that end here and reads up to the next value
  // (past a comma, and an object's key). *done once the top-level value is complete.
  bool AfterValue(bool* done) {
    for (;;) {
      SkipSpace();
      if (stack_.empty()) {
        // nlohmann reads a NUL byte where a token would begin as the end of the input (for C
        // strings), so it ignores what follows; llama-server reads a body the same way.
        if (pos_ != s_.size() && s_[pos_] != '\0') {
          return Fail("unexpected text after the JSON value");
        }
        *done = true;
        return true;
      }
      const bool object = stack_.back() == '{';
      if (pos_ == s_.size()) {
        return Fail(object ? "unexpected end of input; expected ',' or '}'"
                           : "unexpected end of input; expected ',' or ']'");
      }
      const char c = s_[pos_];
      if (c == ',') {
        ++pos_;
        return !object || ScanKey();
      }
      if (c != (object ? '}' : ']')) {
        return Fail(object ? "expected ',' or '}' after an object member"
                           : "expected ',' or ']' after an array element");
      }
      ++pos_;
      stack_.pop_back();
      handler_.End(stack_.size());
    }
  }

  // An object's key and the colon after it.
  bool ScanKey() {
    SkipSpace();
    if (pos_ == s_.size() || s_[pos_] != '"') return Fail("expected a string as an object key");
    std::string_view token;
    if (!ScanString(&token)) return false;
    if (token.find('\\') == std::string_view::npos) {
      handler_.Key(stack_.size(), token.substr(1, token.size() - 2));
    } else {
      key_ = DecodeJsonString(token);
      handler_.Key(stack_.size(), key_);
    }
    SkipSpace();
    if (pos_ == s_.size() || s_[pos_] != ':') return Fail("expected ':' after an object key");
    ++pos_;
    return true;
  }

  bool ScanString(std::string_view* token) {
    const size_t start = pos_++;
    for (;;) {
      // The common bytes in a tight loop (on locals: a member would be stored at every step).
      const char* p = s_.data() + pos_;
      const char* const end = s_.data() + s_.size();
      while (p != end && kPlainStringByte[static_cast<unsigned char>(*p)]) ++p;
      pos_ = static_cast<size_t>(p - s_.data());
      if (pos_ == s_.size()) return Fail("unexpected end of input inside a string");
      const auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        *token = s_.substr(start, pos_ - start);
        return true;
      }
      if (c == '\\') {
        if (!ScanEscape()) return false;
      } else if (c < 0x20) {
        return Fail("a control character in a string (it must be escaped)");
      } else if (!ScanUtf8Sequence(c)) {
        return Fail("invalid UTF-8 in a string");
      }
    }
  }

  bool ScanEscape() {
    if (pos_ + 1 == s_.size()) return Fail("unexpected end of input inside a string");
    const char e = s_[pos_ + 1];
    if (e != 'u') {
      if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' &&
          e != 't') {
        return Fail("an invalid escape in a string");
      }
      pos_ += 2;
      return true;
    }
    const int cp = ReadHex4(s_, pos_ + 2);
    if (cp < 0) return Fail("\\u must be followed by four hex digits");
    if (IsLowSurrogate(cp)) return Fail("a low surrogate \\u escape without a high one before it");
    pos_ += 6;
    if (!IsHighSurrogate(cp)) return true;
    if (s_.substr(pos_, 2) != "\\u" || !IsLowSurrogate(ReadHex4(s_, pos_ + 2))) {
      return Fail("a high surrogate \\u escape must be followed by a low one");
    }
    pos_ += 6;
    return true;
  }

  // A multi-byte UTF-8 sequence starting with `lead`, well formed as RFC 3629 says (no overlong
  // forms, no surrogates, nothing past U+10FFFF).
  bool ScanUtf8Sequence(unsigned char lead) {
    auto in = [&](size_t k, unsigned char lo, unsigned char hi) {
      if (pos_ + k >= s_.size()) return false;
      const auto b = static_cast<unsigned char>(s_[pos_ + k]);
      return b >= lo && b <= hi;
    };
    size_t length = 0;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = in(1, 0x80, 0xBF) ? 2 : 0;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      const unsigned char lo = lead == 0xE0 ? 0xA0 : 0x80;
      const unsigned char hi = lead == 0xED ? 0x9F : 0xBF;
      length = in(1, lo, hi) && in(2, 0x80, 0xBF) ? 3 : 0;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      const unsigned char lo = lead == 0xF0 ? 0x90 : 0x80;
      const unsigned char hi = lead == 0xF4 ? 0x8F : 0xBF;
      length = in(1, lo, hi) && in(2, 0x80, 0xBF) && in(3, 0x80, 0xBF) ? 4 : 0;
    }
    pos_ += length;
    return length != 0;
  }

  bool ScanNumber(std::string_view* token) {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
      return pos_ > from;
    };
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
    } else if (!digits()) {
      return Fail("a number needs a digit here");
    }
    bool exponent = false;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (!digits()) return Fail("a number needs a digit after the decimal point");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      exponent = true;
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return Fail("a number needs a digit in its exponent");
    }
    *token = s_.substr(start, pos_ - start);
    if (exponent || token->size() > kSafeNumberLength) {
      const JsonNumber n = ReadJsonNumber(*token);
      if (n.kind == JsonNumber::Kind::kFloat && !std::isfinite(n.f)) {
        pos_ = start;
        return Fail("number overflow: too large for a double",
                    JsonScanError::Kind::kNumberOverflow);
      }
    }
    return true;
  }

  const std::string_view s_;
  JsonHandler& handler_;
  const size_t max_depth_;
  size_t pos_ = 0;
  std::string stack_;  // '{' or '[' for each open container
  std::string key_;    // a key with escapes, decoded
  JsonScanError error_;
};

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace

std::optional<JsonScanError> ScanJson(std::string_view text, JsonHandler& handler,
                                      size_t max_depth) {
  return Scanner(text, handler, max_depth).Run();
}

std::string DecodeJsonString(std::string_view token) {
  std::string_view s = token.substr(1, token.size() - 2);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out.push_back(s[i]);
      continue;
    }
    const char e = s[++i];
    switch (e) {
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        uint32_t cp = static_cast<uint32_t>(ReadHex4(s, i + 1));
        i += 4;
        if (IsHighSurrogate(static_cast<int>(cp))) {  // ScanJson checked the low one follows
          const auto low = static_cast<uint32_t>(ReadHex4(s, i + 3));
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          i += 6;
        }
        AppendUtf8(out, cp);
        break;
      }
      default:
        out.push_back(e);  // '"', '\\', '/'
    }
  }
  return out;
}

JsonNumber ReadJsonNumber(std::string_view token) {
  JsonNumber n;
  const char* first = token.data();
  const char* last = token.data() + token.size();
  if (token.find_first_of(".eE") == std::string_view::npos) {
    if (token.starts_with('-')) {
      auto [end, ec] = std::from_chars(first, last, n.i);
      if (ec == std::errc() && end == last) {
        n.kind = JsonNumber::Kind::kSigned;
        return n;
      }
    } else {
      auto [end, ec] = std::from_chars(first, last, n.u);
      if (ec == std::errc() && end == last) {
        n.kind = JsonNumber::Kind::kUnsigned;
        return n;
      }
    }
  }
  // strtod, as nlohmann uses: it needs a terminated copy.
  n.kind = JsonNumber::Kind::kFloat;
  n.f = std::strtod(std::string(token).c_str(), nullptr);
  return n;
}

}  // namespace swapd
