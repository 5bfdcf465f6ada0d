#include "frontdoor/header_snapshot.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "http/http1_syntax.h"  // EqualsIgnoreCase

namespace swapd {
namespace {

constexpr size_t kLengths = 2 * sizeof(uint32_t);

// llama-swap's sensitive headers, and the other spellings of an API key clients send.
constexpr std::array<std::string_view, 7> kRedacted = {
    "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key",
    "api-key",       "x-goog-api-key"};

bool IsCredential(std::string_view name) {
  return std::any_of(kRedacted.begin(), kRedacted.end(),
                     [&](std::string_view r) { return EqualsIgnoreCase(name, r); });
}

}  // namespace

HeaderSnapshot::HeaderSnapshot(const HttpHeaders& headers, bool (*skip)(std::string_view)) {
  AddAll(headers, skip);
}

HeaderSnapshot::HeaderSnapshot(const std::vector<HeaderField>& headers,
                               bool (*skip)(std::string_view)) {
  AddAll(headers, skip);
}

template <typename Fields>
void HeaderSnapshot::AddAll(const Fields& fields, bool (*skip)(std::string_view)) {
  size_t size = 0;
  for (const auto& [name, value] : fields) size += kLengths + name.size() + value.size();
  buffer_.reserve(size);  // one allocation (a redacted value may be longer: rarely a second)
  for (const auto& [name, value] : fields) {
    if (skip == nullptr || !skip(name)) Add(name, value);
  }
}

void HeaderSnapshot::Add(std::string_view name, std::string_view value) {
  if (IsCredential(name)) value = "[REDACTED]";
  const uint32_t lengths[2] = {static_cast<uint32_t>(name.size()),
                               static_cast<uint32_t>(value.size())};
  buffer_.append(reinterpret_cast<const char*>(lengths), kLengths);
  buffer_.append(name);
  buffer_.append(value);
}

template <typename F>
void HeaderSnapshot::ForEach(F&& f) const {
  for (size_t at = 0; at + kLengths <= buffer_.size();) {
    uint32_t lengths[2];
    std::memcpy(lengths, buffer_.data() + at, kLengths);
    at += kLengths;
    const std::string_view name(buffer_.data() + at, lengths[0]);
    const std::string_view value(buffer_.data() + at + lengths[0], lengths[1]);
    at += lengths[0] + lengths[1];
    f(name, value);
  }
}

bool HeaderSnapshot::Has(std::string_view name) const {
  bool found = false;
  ForEach(
      [&](std::string_view n, std::string_view) { found = found || EqualsIgnoreCase(n, name); });
  return found;
}

nlohmann::json HeaderSnapshot::ToJson() const {
  nlohmann::json map = nlohmann::json::object();
  ForEach([&](std::string_view name, std::string_view value) {
    std::string key = CanonicalHeaderName(name);
    if (!map.contains(key)) map[std::move(key)] = std::string(value);  // the first, as Go's Get
  });
  return map;
}

size_t HeaderSnapshot::Bytes() const { return HeapBytes(buffer_); }

HeaderSnapshot HeaderSnapshot::FromEncoded(std::string_view encoded) {
  HeaderSnapshot snapshot;
  snapshot.buffer_ = std::string(encoded);
  return snapshot;
}

std::string CanonicalHeaderName(std::string_view name) {
  std::string out(name);
  bool upper = true;
  for (char& c : out) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    upper = c == '-';
  }
  return out;
}

size_t HeapBytes(const std::string& s) {
  // libstdc++ keeps up to 15 chars inline. glibc: the request plus its 8-byte size field,
  // rounded up to 16, at least 32.
  constexpr size_t kInline = 15;
  if (s.capacity() <= kInline) return 0;
  return std::max<size_t>(32, (s.capacity() + 1 + 8 + 15) & ~size_t{15});
}

}  // namespace swapd
