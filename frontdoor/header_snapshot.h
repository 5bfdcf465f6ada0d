// HeaderSnapshot: a copy of a message's header fields, kept to be shown later (the in-flight
// table's entries, captures) as llama-swap shows them: a JSON map of one value per canonical name
// (the first), API keys and cookies "[REDACTED]". It is one buffer (a single allocation, whatever
// the number of fields), redacted as it is made, so that a credential is never kept; the map is
// rendered only when someone reads it (a request usually ends unread). Immutable once made but
// for Add; not synchronized.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "http/http1_response.h"
#include "http/message.h"

namespace swapd {

class HeaderSnapshot {
 public:
  HeaderSnapshot() = default;
  // The fields of `headers` that `skip` (when set) does not name.
  explicit HeaderSnapshot(const HttpHeaders& headers, bool (*skip)(std::string_view) = nullptr);
  explicit HeaderSnapshot(const std::vector<HeaderField>& headers,
                          bool (*skip)(std::string_view) = nullptr);

  // One more field, last (so that an earlier one of its name wins).
  void Add(std::string_view name, std::string_view value);
  bool Has(std::string_view name) const;  // case-insensitive
  bool empty() const { return buffer_.empty(); }

  // {"Canonical-Name": "first value", ...}.
  nlohmann::json ToJson() const;
  // The heap bytes it holds (its buffer's allocation; see HeapBytes).
  size_t Bytes() const;

  // Its encoded fields, as kept (to be stored elsewhere), and a snapshot of them again.
  std::string_view encoded() const { return buffer_; }
  static HeaderSnapshot FromEncoded(std::string_view encoded);

 private:
  template <typename Fields>
  void AddAll(const Fields& fields, bool (*skip)(std::string_view));
  // Calls `f(name, value)` for each field in order.
  template <typename F>
  void ForEach(F&& f) const;

  // Each field: the name's length and the value's (4 bytes each, host order), then their bytes.
  std::string buffer_;
};

// A header name as Go writes it ("x-api-key" -> "X-Api-Key").
std::string CanonicalHeaderName(std::string_view name);

// What glibc's malloc takes for a string's heap buffer (the chunk, with its header): 0 when the
// string is held inline (short-string optimization).
size_t HeapBytes(const std::string& s);

}  // namespace swapd
