#include "http/message.h"

#include <algorithm>

#include "base/proxy_url.h"
#include "http/http1_syntax.h"

namespace swapd {

const HttpHeaders::Field* HttpHeaders::Find(std::string_view name) const {
  for (const Field& f : fields_) {
    if (EqualsIgnoreCase(f.first, name)) return &f;
  }
  return nullptr;
}

void HttpHeaders::Set(std::string_view name, std::string value) {
  Erase(name);
  fields_.emplace_back(std::string(name), std::move(value));
}

void HttpHeaders::Erase(std::string_view name) {
  fields_.erase(std::remove_if(fields_.begin(), fields_.end(),
                               [&](const Field& f) { return EqualsIgnoreCase(f.first, name); }),
                fields_.end());
}

std::optional<std::string_view> HttpRequest::Param(std::string_view name) const {
  for (const auto& [key, value] : params) {
    if (key == name) return std::string_view(value);
  }
  return std::nullopt;
}

void HttpResponse::SetStream(std::string_view content_type,
                             std::function<bool(BodyWriter&, RequestContext&)> next,
                             std::function<void(bool whole)> finished) {
  if (content_type.empty()) {
    headers.Erase("Content-Type");
  } else {
    headers.Set("Content-Type", std::string(content_type));
  }
  stream = std::make_unique<BodyStream>();
  stream->next = std::move(next);
  stream->finished = std::move(finished);
}

void RenderPlainError(HttpResponse& res, int status, std::string_view message) {
  res.status = status;
  res.headers.Clear();
  res.stream.reset();
  res.SetBody(std::string(message) + "\n", "text/plain; charset=utf-8");
}

std::string FormatRequestHead(const ProxyUrl& url, std::string_view method, std::string_view target,
                              std::string_view extra, const HttpHeaders& headers,
                              bool (*skip)(std::string_view name), size_t body_size) {
  std::string head;
  head.reserve(256 + target.size());
  head += method;
  head += ' ';
  head += url.path_prefix;
  head += target;
  head += " HTTP/1.1\r\nHost: ";
  head += url.authority;
  head += "\r\n";
  head += extra;
  for (const auto& [name, value] : headers) {
    if (skip(name)) continue;
    head += name;
    head += ": ";
    head += value;
    head += "\r\n";
  }
  if (body_size > 0 || method == "POST" || method == "PUT" || method == "PATCH") {
    head += "Content-Length: ";
    AppendDecimal(head, body_size);
    head += "\r\n";
  }
  head += "\r\n";
  return head;
}

}  // namespace swapd
