#include "http/http1_response.h"

#include <algorithm>
#include <cctype>

#include "http/http1_syntax.h"

namespace swapd {
namespace {

constexpr size_t kMaxLine = 8192;  // a chunk-size or trailer line longer than this is malformed

Status Malformed(const std::string& what) {
  return Status::Error(ErrorCode::kBackendFailed,
                       "malformed HTTP response from the backend: " + what);
}

}  // namespace

size_t FindHeadEnd(std::string_view bytes) {
  size_t crlf = bytes.find("\r\n\r\n");
  size_t lf = bytes.find("\n\n");
  if (crlf != std::string_view::npos && (lf == std::string_view::npos || crlf + 1 < lf)) {
    return crlf + 4;
  }
  return lf == std::string_view::npos ? lf : lf + 2;
}

Result<ResponseStart> ParseResponseHead(std::string_view head, bool head_request) {
  ResponseStart start;
  start.headers.reserve(16);
  size_t eol = head.find('\n');
  std::string_view status_line = head.substr(0, eol);
  if (!status_line.empty() && status_line.back() == '\r') status_line.remove_suffix(1);
  // "HTTP/1.1 200 OK": the version, a space, three digits, then a space and a reason (optional).
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." ||
      (status_line[7] != '0' && status_line[7] != '1') || status_line[8] != ' ' ||
      (status_line.size() > 12 && status_line[12] != ' ')) {
    return Malformed("bad status line \"" + std::string(status_line.substr(0, 80)) + "\"");
  }
  uint64_t code = 0;
  if (!ParseDecimal(status_line.substr(9, 3), code) || code < 100) {
    return Malformed("bad status code in \"" + std::string(status_line.substr(0, 80)) + "\"");
  }
  start.status = static_cast<int>(code);
  const bool http10 = status_line[7] == '0';

  bool chunked = false;
  bool has_transfer_encoding = false;
  std::string_view connection;
  for (size_t pos = eol + 1; eol != std::string_view::npos && pos < head.size(); pos = eol + 1) {
    eol = head.find('\n', pos);
    std::string_view line = head.substr(pos, eol == std::string_view::npos ? eol : eol - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;
    std::string_view name;
    std::string_view value;
    if (!SplitFieldLine(line, name, value)) {
      return Malformed("bad header line \"" + std::string(line.substr(0, 80)) + "\"");
    }
    if (EqualsIgnoreCase(name, "Content-Length")) {
      uint64_t length = 0;
      if (!ParseDecimal(value, length) || (start.has_length && length != start.content_length)) {
        return Malformed("bad Content-Length \"" + std::string(value.substr(0, 40)) + "\"");
      }
      start.has_length = true;
      start.content_length = length;
    } else if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
      has_transfer_encoding = true;
      chunked = EqualsIgnoreCase(LastListElement(value), "chunked");
    } else if (EqualsIgnoreCase(name, "Connection")) {
      connection = value;
    }
    start.headers.push_back({name, value});
  }

  start.keep_alive =
      http10 ? ListContains(connection, "keep-alive") : !ListContains(connection, "close");
  if (head_request || start.status < 200 || start.status == 204 || start.status == 304) {
    start.framing = BodyFraming::kNone;
  } else if (has_transfer_encoding) {
    start.framing = chunked ? BodyFraming::kChunked : BodyFraming::kUntilClose;
  } else if (start.has_length) {
    start.framing = BodyFraming::kLength;
  } else {
    start.framing = BodyFraming::kUntilClose;
  }
  if (start.framing == BodyFraming::kUntilClose) start.keep_alive = false;
  return start;
}

BodyDecoder::BodyDecoder(BodyFraming framing, uint64_t content_length)
    : framing_(framing), remaining_(content_length) {
  switch (framing) {
    case BodyFraming::kNone:
      state_ = State::kDone;
      break;
    case BodyFraming::kLength:
      state_ = content_length == 0 ? State::kDone : State::kData;
      break;
    case BodyFraming::kChunked:
      state_ = State::kChunkSize;
      break;
    case BodyFraming::kUntilClose:
      state_ = State::kData;
      break;
  }
}

std::string_view BodyDecoder::Fail(std::string message) {
  state_ = State::kFailed;
  error_ = "malformed HTTP response from the backend: " + std::move(message);
  return {};
}

bool BodyDecoder::TakeLine(std::string_view& in) {
  size_t lf = in.find('\n');
  line_.append(in.substr(0, lf));
  in.remove_prefix(lf == std::string_view::npos ? in.size() : lf + 1);
  if (line_.size() > kMaxLine) {
    Fail("a chunk line longer than " + std::to_string(kMaxLine) + " bytes");
    return false;
  }
  if (lf == std::string_view::npos) return false;
  if (!line_.empty() && line_.back() == '\r') line_.pop_back();
  return true;
}

std::string_view BodyDecoder::Next(std::string_view& in) {
  while (!in.empty()) {
    switch (state_) {
      case State::kData: {
        if (framing_ == BodyFraming::kUntilClose) {
          std::string_view piece = in;
          in = {};
          return piece;
        }
        size_t n = static_cast<size_t>(std::min<uint64_t>(remaining_, in.size()));
        std::string_view piece = in.substr(0, n);
        in.remove_prefix(n);
        remaining_ -= n;
        if (remaining_ == 0) {
          state_ = framing_ == BodyFraming::kLength ? State::kDone : State::kChunkDataEnd;
        }
        return piece;
      }
      case State::kChunkSize: {
        if (!TakeLine(in)) break;
        std::string_view digits(line_);
        digits = TrimWhitespace(digits.substr(0, digits.find(';')));
        if (digits.empty() || digits.size() > 15) return Fail("bad chunk size \"" + line_ + "\"");
        uint64_t size = 0;
        for (char c : digits) {
          int v = std::isxdigit(static_cast<unsigned char>(c))
                      ? (std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                                                                     : (std::tolower(c) - 'a' + 10))
                      : -1;
          if (v < 0) return Fail("bad chunk size \"" + line_ + "\"");
          size = size * 16 + static_cast<uint64_t>(v);
        }
        line_.clear();
        remaining_ = size;
        state_ = size == 0 ? State::kTrailers : State::kData;
        break;
      }
      case State::kChunkDataEnd:
        if (!TakeLine(in)) break;
        if (!line_.empty()) return Fail("chunk data longer than its size");
        state_ = State::kChunkSize;
        break;
      case State::kTrailers:
        if (!TakeLine(in)) break;
        if (line_.empty()) state_ = State::kDone;
        line_.clear();  // trailer fields are dropped
        break;
      case State::kDone:
      case State::kFailed:
        return {};
    }
    if (state_ == State::kFailed) return {};
  }
  return {};
}

void BodyDecoder::EndOfInput() {
  if (state_ == State::kDone || state_ == State::kFailed) return;
  if (framing_ == BodyFraming::kUntilClose) {
    state_ = State::kDone;
    return;
  }
  Fail("the connection closed before the body was complete");
}

}  // namespace swapd
