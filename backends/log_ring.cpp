#include "backends/log_ring.h"

#include <algorithm>

namespace swapd {

LogRing::LogRing(size_t capacity_bytes) : capacity_bytes_(std::max<size_t>(capacity_bytes, 1)) {}

void LogRing::Append(std::string_view line) {
  if (line.size() > capacity_bytes_) line = line.substr(0, capacity_bytes_);
  std::lock_guard<std::mutex> lock(mu_);
  while (!lines_.empty() && size_bytes_ + line.size() > capacity_bytes_) {
    size_bytes_ -= lines_.front().size();
    lines_.pop_front();
  }
  lines_.emplace_back(line);
  size_bytes_ += line.size();
  ++total_lines_;
}

std::string LogRing::Tail(size_t lines) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = std::min(lines, lines_.size());
  std::string out;
  for (size_t i = lines_.size() - n; i < lines_.size(); ++i) {
    out += lines_[i];
    out += '\n';
  }
  return out;
}

size_t LogRing::SizeBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return size_bytes_;
}

size_t LogRing::TotalLines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_lines_;
}

LineSplitter::LineSplitter(LineFn on_line, size_t max_line_bytes)
    : on_line_(std::move(on_line)), max_line_bytes_(std::max<size_t>(max_line_bytes, 1)) {}

void LineSplitter::Feed(std::string_view bytes) {
  while (!bytes.empty()) {
    size_t nl = bytes.find('\n');
    std::string_view piece = nl == std::string_view::npos ? bytes : bytes.substr(0, nl);
    if (partial_.empty() && nl != std::string_view::npos && piece.size() <= max_line_bytes_) {
      Emit(piece);  // the common case: a whole line inside one read, no copy
    } else {
      partial_.append(piece);
      while (partial_.size() > max_line_bytes_) {
        Emit(std::string_view(partial_).substr(0, max_line_bytes_));
        partial_.erase(0, max_line_bytes_);
      }
      if (nl != std::string_view::npos) {
        Emit(partial_);
        partial_.clear();
      }
    }
    if (nl == std::string_view::npos) break;
    bytes.remove_prefix(nl + 1);
  }
  if (on_partial_ && !partial_.empty()) on_partial_(partial_);
}

void LineSplitter::Flush() {
  if (partial_.empty()) return;
  Emit(partial_);
  partial_.clear();
}

void LineSplitter::Emit(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  on_line_(line);
}

}  // namespace swapd
