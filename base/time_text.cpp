#include "base/time_text.h"

#include <cctype>
#include <ctime>

namespace swapd {
namespace {

// The `digits`-digit number at `pos`, or -1.
int Number(std::string_view text, size_t pos, size_t digits) {
  if (pos + digits > text.size()) return -1;
  int value = 0;
  for (size_t i = pos; i < pos + digits; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

}  // namespace

std::string Rfc3339(int64_t unix_seconds) {
  const std::time_t seconds = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::optional<int64_t> ParseRfc3339(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS
  const int year = Number(text, 0, 4), month = Number(text, 5, 2), day = Number(text, 8, 2);
  const int hour = Number(text, 11, 2), minute = Number(text, 14, 2), second = Number(text, 17, 2);
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't') || text[13] != ':' || text[16] != ':' || year < 0 ||
      month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60) {
    return std::nullopt;
  }
  size_t pos = 19;
  if (text[pos] == '.') {  // fractions of a second: read, then dropped
    const size_t digits = ++pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
    if (pos == digits) return std::nullopt;
  }
  int64_t offset = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int hours = Number(text, pos + 1, 2), minutes = Number(text, pos + 4, 2);
    if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59 || pos + 3 >= text.size() ||
        text[pos + 3] != ':') {
      return std::nullopt;
    }
    offset = (text[pos] == '+' ? 1 : -1) * (hours * 3600 + minutes * 60);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  std::tm utc{};
  utc.tm_year = year - 1900;
  utc.tm_mon = month - 1;
  utc.tm_mday = day;
  utc.tm_hour = hour;
  utc.tm_min = minute;
  utc.tm_sec = second;
  return static_cast<int64_t>(timegm(&utc)) - offset;
}

}  // namespace swapd
