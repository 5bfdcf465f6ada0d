// Status: the outcome of an operation that can fail in an expected way, as a value (no exceptions
// cross module boundaries). An error carries a code, which frontdoor/ maps to an HTTP status in one
// place, and a human-readable message. Result<T> is a value or an error Status.
// Plain value types: copy them freely; not synchronized.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace swapd {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  // bad input from a user: config or request (HTTP 400)
  kUnauthorized,     // missing or wrong API key (401)
  kNotFound,         // unknown model, route or file (404)
  kPayloadTooLarge,  // request body over the limit (413)
  kTooManyRequests,  // concurrencyLimit reached (429)
  kInternal,         // a bug or an unexpected OS failure (500)
  kBackendFailed,    // backend exited, crashed or answered garbage (502)
  kUnavailable,      // shutting down, or not ready in time (503)
  kTimeout,          // a deadline passed (504)
};

class Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(ErrorCode code, std::string message) {
    return Status(code, std::move(message));
  }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const { return ok() ? "OK" : message_; }
  // When retrying may succeed (HTTP Retry-After), in seconds; 0 = not said.
  int retry_after_seconds() const { return retry_after_seconds_; }
  Status WithRetryAfter(int seconds) && {
    retry_after_seconds_ = seconds;
    return std::move(*this);
  }

 private:
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
  int retry_after_seconds_ = 0;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}       // NOLINT: implicit by design
  Result(Status error) : v_(std::move(error)) {}  // NOLINT: must not be Ok

  bool ok() const { return std::holds_alternative<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace swapd
