#include "frontdoor/request_capture.h"

#include <algorithm>
#include <array>
#include <utility>

namespace swapd {
namespace {

// A RequestCapture with its shared_ptr's control block (made by make_shared: one chunk).
constexpr size_t kCaptureChunk = (sizeof(RequestCapture) + 16 + 8 + 15) & ~size_t{15};

}  // namespace

size_t RequestCapture::Bytes() const {
  return kCaptureChunk + HeapBytes(req_path) + (req_headers ? req_headers->Bytes() : 0) +
         (req_body ? HeapBytes(*req_body) : 0) + (resp_headers ? resp_headers->Bytes() : 0) +
         (resp_body ? HeapBytes(*resp_body) : 0);
}

nlohmann::json CapturedHeadersJson(const std::optional<HeaderSnapshot>& headers) {
  return headers ? headers->ToJson() : nlohmann::json();
}

CaptureParts CapturePartsFor(std::string_view path) {
  // llama-swap's captureFieldsByPath: {req_headers, req_body, resp_headers, resp_body}.
  static constexpr std::array<std::pair<std::string_view, CaptureParts>, 7> kMedia = {{
      {"/v1/audio/speech", {true, true, true, false}},
      {"/v1/audio/voices", {true, false, true, true}},
      {"/v1/audio/transcriptions", {true, false, true, true}},
      {"/v1/images/generations", {true, true, true, false}},
      {"/v1/images/edits", {true, false, true, false}},
      {"/sdapi/v1/txt2img", {true, true, true, false}},
      {"/sdapi/v1/img2img", {true, false, true, false}},
  }};
  for (const auto& [media, parts] : kMedia) {
    if (path == media) return parts;
  }
  return {};
}

CaptureBuilder::CaptureBuilder(size_t limit, std::string_view path, const HttpHeaders* headers,
                               std::string_view body)
    : limit_(limit), parts_(CapturePartsFor(path)) {
  if (limit_ == 0) return;
  capture_ = std::make_shared<RequestCapture>();
  capture_->req_path = std::string(path);
  if (parts_.req_headers && headers) capture_->req_headers.emplace(*headers);
  if (parts_.req_body) capture_->req_body = std::string(body);
  if (capture_->Bytes() > limit_) capture_.reset();
}

void CaptureBuilder::SetResponseHeaders(const HttpHeaders& headers, std::string_view content_type) {
  if (!capture_ || !parts_.resp_headers) return;
  HeaderSnapshot& kept = capture_->resp_headers.emplace(headers);
  if (!content_type.empty() && !kept.Has("Content-Type")) kept.Add("Content-Type", content_type);
}

void CaptureBuilder::AddResponseBytes(std::string_view piece) {
  if (!capture_ || !parts_.resp_body || piece.empty()) return;
  if (!capture_->resp_body) capture_->resp_body.emplace();
  // A capture bigger than the buffer is never kept: stop copying a long stream at once.
  if (capture_->resp_body->size() + piece.size() > limit_) {
    capture_.reset();
    return;
  }
  capture_->resp_body->append(piece);
}

std::shared_ptr<const RequestCapture> CaptureBuilder::Finish(int status) {
  if (!capture_) return nullptr;
  if (status != 200) {
    capture_->resp_body.reset();
  } else if (parts_.resp_body && !capture_->resp_body) {
    capture_->resp_body.emplace();  // an empty answer
  }
  if (capture_->Bytes() > limit_) capture_.reset();
  return std::move(capture_);
}

size_t CaptureBufferBytes(int64_t megabytes) {
  constexpr int64_t kMaxMegabytes = int64_t{1} << 20;  // 1 TiB: no overflow below
  if (megabytes <= 0) return 0;
  return static_cast<size_t>(std::min(megabytes, kMaxMegabytes)) << 20;
}

}  // namespace swapd
