// Fnv1a: FNV-1a's 64-bit steps (xor a byte, multiply by FNV's prime), the same in every build and
// run: for ids derived from text (a model definition's hash, a config's), never for security.
// Its offset basis, 1469598103934665603, is one digit short of FNV's published
// 14695981039346656037 (an early slip): it is kept, because the hashes stored in users' databases
// (load times, bench results) were made with it. The hash is as well spread either way.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace swapd {

class Fnv1a {
 public:
  Fnv1a& Add(std::string_view text) {
    for (unsigned char c : text) Mix(c);
    return *this;
  }
  // A zero byte: parts added with one between them cannot run into each other.
  Fnv1a& AddSeparator() {
    Mix(0);
    return *this;
  }
  uint64_t value() const { return hash_; }
  // The value as 16 lower-case hex digits.
  std::string Hex() const {
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(hash_));
    return out;
  }

 private:
  void Mix(unsigned char c) {
    hash_ ^= c;
    hash_ *= 1099511628211ull;
  }
  uint64_t hash_ = 1469598103934665603ull;
};

}  // namespace swapd
