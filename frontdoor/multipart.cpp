#include "frontdoor/multipart.h"

#include "http/http1_syntax.h"

namespace swapd {
namespace {

// The value of parameter `key` in a header value such as `form-data; name="model"`.
std::optional<std::string> HeaderParameter(std::string_view value, std::string_view key) {
  size_t semi = value.find(';');
  while (semi != std::string_view::npos) {
    value.remove_prefix(semi + 1);
    semi = value.find(';');
    std::string_view param = TrimWhitespace(value.substr(0, semi));
    size_t eq = param.find('=');
    if (eq == std::string_view::npos ||
        !EqualsIgnoreCase(TrimWhitespace(param.substr(0, eq)), key)) {
      continue;
    }
    std::string_view v = TrimWhitespace(param.substr(eq + 1));
    if (v.size() >= 2 && v.front() == '"') {
      size_t close = v.find('"', 1);
      if (close == std::string_view::npos) return std::nullopt;
      return std::string(v.substr(1, close - 1));
    }
    return std::string(v);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> MultipartBoundary(std::string_view content_type) {
  std::string_view type = TrimWhitespace(content_type.substr(0, content_type.find(';')));
  if (!EqualsIgnoreCase(type, "multipart/form-data")) return std::nullopt;
  std::optional<std::string> boundary = HeaderParameter(content_type, "boundary");
  if (!boundary || boundary->empty() || boundary->size() > 70) return std::nullopt;
  return boundary;
}

FormScan ScanForm(std::string_view body, std::string_view boundary, std::string_view name) {
  FormScan scan;
  const std::string delimiter = "--" + std::string(boundary);
  const std::string next_delimiter = "\r\n" + delimiter;
  // The first delimiter may open the body; every later one follows a CRLF.
  size_t pos = body.rfind(delimiter, 0) == 0 ? 0 : body.find(next_delimiter);
  if (pos == std::string_view::npos) return scan;
  pos += pos == 0 ? delimiter.size() : next_delimiter.size();
  for (;;) {
    if (body.substr(pos, 2) == "--") {  // the closing delimiter
      scan.well_formed = true;
      return scan;
    }
    size_t line_end = body.find("\r\n", pos);
    if (line_end == std::string_view::npos) return scan;
    size_t head_end = body.find("\r\n\r\n", line_end);
    if (head_end == std::string_view::npos) return scan;
    bool wanted = false;
    for (size_t at = line_end + 2; at < head_end + 2;) {
      size_t eol = body.find("\r\n", at);
      std::string_view field_name;
      std::string_view value;
      if (SplitFieldLine(body.substr(at, eol - at), field_name, value) &&
          EqualsIgnoreCase(field_name, "Content-Disposition")) {
        wanted = HeaderParameter(value, "name") == std::string(name);
      }
      at = eol + 2;
    }
    const size_t content = head_end + 4;
    size_t next = body.find(next_delimiter, content);
    if (next == std::string_view::npos) return scan;  // truncated
    if (wanted && !scan.field) scan.field = FormField{content, next - content};
    pos = next + next_delimiter.size();
  }
}

}  // namespace swapd
