#include "http/http1_request.h"

#include <algorithm>

#include "base/text.h"
#include "http/http1_syntax.h"

namespace swapd {
namespace {

bool Fail(RequestError& error, int status, std::string message) {
  error.status = status;
  error.message = std::move(message);
  return false;
}

bool IsTokenChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// "METHOD SP target SP HTTP/1.x"
bool ParseRequestLine(std::string_view line, RequestHead& out, RequestError& error) {
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Fail(error, 400, "malformed request line");
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (method.empty()) return Fail(error, 400, "malformed request line: no method");
  for (char c : method) {
    if (!IsTokenChar(c)) return Fail(error, 400, "malformed request line: bad method");
  }
  if (target.empty() || target.front() != '/') {
    return Fail(error, 400, "malformed request line: the target must start with '/'");
  }
  for (char c : target) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      return Fail(error, 400, "malformed request line: control character in the target");
    }
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return Fail(error, version.substr(0, 5) == "HTTP/" ? 505 : 400,
                "unsupported protocol version \"" + std::string(version.substr(0, 20)) + "\"");
  }
  out.method = method;
  out.target = target;
  out.minor_version = version.back() - '0';
  size_t question = target.find('?');
  out.path = PercentDecode(target.substr(0, question), false);
  out.query = question == std::string_view::npos ? "" : target.substr(question + 1);
  return true;
}

}  // namespace

bool ParseRequestHead(std::string_view head, size_t max_fields, RequestHead& out,
                      RequestError& error) {
  out = RequestHead();
  size_t eol = head.find('\n');
  std::string_view line = head.substr(0, eol);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!ParseRequestLine(line, out, error)) return false;
  // A field per line at most: one allocation, where growing field by field took several.
  out.headers.Reserve(std::min<size_t>(max_fields, std::count(head.begin(), head.end(), '\n')));

  bool has_length = false;
  bool has_transfer_encoding = false;
  std::string_view connection;
  for (size_t pos = eol + 1; eol != std::string_view::npos && pos < head.size(); pos = eol + 1) {
    eol = head.find('\n', pos);
    line = head.substr(pos, eol == std::string_view::npos ? eol : eol - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;
    std::string_view name;
    std::string_view value;
    if (!SplitFieldLine(line, name, value)) {
      return Fail(error, 400, "malformed header line \"" + std::string(line.substr(0, 80)) + "\"");
    }
    if (out.headers.size() == max_fields) {
      return Fail(error, 431,
                  "too many request headers (at most " + std::to_string(max_fields) + ")");
    }
    if (EqualsIgnoreCase(name, "Content-Length")) {
      uint64_t length = 0;
      if (!ParseDecimal(value, length) || (has_length && length != out.content_length)) {
        return Fail(error, 400, "bad Content-Length \"" + std::string(value.substr(0, 40)) + "\"");
      }
      has_length = true;
      out.content_length = length;
    } else if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
      if (!EqualsIgnoreCase(value, "chunked")) {
        return Fail(error, 501,
                    "unsupported Transfer-Encoding \"" + std::string(value.substr(0, 40)) + "\"");
      }
      has_transfer_encoding = true;
    } else if (EqualsIgnoreCase(name, "Connection")) {
      connection = value;
    } else if (EqualsIgnoreCase(name, "Expect")) {
      // An HTTP/1.0 client does not know 100 (RFC 9110 10.1.1): it gets no interim answer.
      out.expect_continue = out.minor_version >= 1 && EqualsIgnoreCase(value, "100-continue");
    }
    out.headers.Add(std::string(name), std::string(value));
  }
  // A request with both is a smuggling attempt or a broken client (RFC 9112 6.3): refused.
  if (has_transfer_encoding && has_length) {
    return Fail(error, 400, "a request with both Content-Length and Transfer-Encoding");
  }
  out.keep_alive = out.minor_version == 0 ? ListContains(connection, "keep-alive")
                                          : !ListContains(connection, "close");
  if (has_transfer_encoding) {
    out.framing = BodyFraming::kChunked;
  } else if (has_length && out.content_length > 0) {
    out.framing = BodyFraming::kLength;
  }
  return true;
}

std::string PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexDigitValue(s[i + 1]) >= 0 &&
        HexDigitValue(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexDigitValue(s[i + 1]) * 16 + HexDigitValue(s[i + 2])));
      i += 2;
    } else if (s[i] == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> ParseQuery(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> params;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string_view value = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    params.emplace_back(PercentDecode(pair.substr(0, eq), true), PercentDecode(value, true));
  }
  return params;
}

}  // namespace swapd
