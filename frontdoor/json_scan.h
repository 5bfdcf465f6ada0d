// ScanJson: reads a JSON text once, front to back, and tells a handler what it meets, building no
// document. It accepts exactly the texts nlohmann::json::parse accepts (RFC 8259; strings checked
// as UTF-8 with paired surrogates; an optional UTF-8 BOM; numbers that fit in a double), so the
// front door can check a request and read its model without the parser's per-byte costs
// (nlohmann's lexer copies every byte it reads; this scan touches each byte once). Pure; thread
// safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace swapd {

enum class JsonKind { kNull, kBoolean, kNumber, kString, kObject, kArray };

class JsonHandler {
 public:
  virtual ~JsonHandler() = default;
  // A value begins at `depth`: 0 for the top-level value, 1 directly inside it, and so on.
  // `token` is a scalar's text as written (a string with its quotes and escapes); it is empty for
  // an object or an array, whose contents follow until End(depth).
  virtual void Value(size_t depth, JsonKind kind, std::string_view token) = 0;
  // A key of an object whose members are at `depth` (1 for the top-level object), escapes decoded.
  // The view is valid during the call only.
  virtual void Key(size_t depth, std::string_view key) = 0;
  // The object or array that began at `depth` ends.
  virtual void End(size_t depth) { (void)depth; }
  // Asked after Value() of an object or array at `depth`: true passes over its contents, reading
  // only where its strings and its brackets end (about a byte a step, with no checks and no calls
  // for what is inside), then End(depth). For a handler that wants a few fields of a large
  // document, such as a response's usage, which it does not have to check.
  virtual bool Skip(size_t depth) {
    (void)depth;
    return false;
  }
};

struct JsonScanError {
  enum class Kind { kMalformed, kNumberOverflow, kTooDeep } kind = Kind::kMalformed;
  size_t offset = 0;    // the byte where the scan stopped
  std::string message;  // "at line 1, column 12: expected ':' after an object key"
};

// Scans `text`, which must hold one JSON value and nothing but whitespace around it (a value the
// handler skips is not checked). Arrays and
// objects nested deeper than `max_depth` levels are an error (kTooDeep). The handler sees every
// value up to an error; on error its findings are incomplete.
std::optional<JsonScanError> ScanJson(std::string_view text, JsonHandler& handler,
                                      size_t max_depth = SIZE_MAX);

// The value of a string token that ScanJson handed over (quotes and escapes), in UTF-8.
std::string DecodeJsonString(std::string_view token);

// A number token read as nlohmann::json reads it: an integer that fits in int64 (negative) or
// uint64 (otherwise) is one, anything else a double.
struct JsonNumber {
  enum class Kind { kSigned, kUnsigned, kFloat } kind = Kind::kFloat;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
};
JsonNumber ReadJsonNumber(std::string_view token);

}  // namespace swapd
