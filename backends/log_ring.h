// LogRing: the last output lines of one model's backend (stdout and stderr, cmdStop output), kept
// in a bounded ring so a chatty backend cannot grow swapd's memory; the oldest lines drop first.
// LineSplitter turns a byte stream (pipe reads of any size) into lines.
// LogRing is thread safe. LineSplitter is not synchronized: one per stream, used by one thread.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace swapd {

class LogRing {
 public:
  // 64 KiB: its readers want the last 20 lines (a start failure's message, /api/models); the
  // longer history is the LogHub's (/logs).
  static constexpr size_t kDefaultCapacityBytes = 64 << 10;

  explicit LogRing(size_t capacity_bytes = kDefaultCapacityBytes);

  // Adds one line (without its '\n'). A line longer than the capacity is truncated.
  void Append(std::string_view line);

  // The last `lines` lines, oldest first, each followed by '\n'. Empty when there are none.
  std::string Tail(size_t lines) const;

  // Bytes of line text held now (excluding separators); never more than the capacity.
  size_t SizeBytes() const;
  // Lines appended since construction, including the dropped ones.
  size_t TotalLines() const;

 private:
  const size_t capacity_bytes_;
  mutable std::mutex mu_;
  std::deque<std::string> lines_;  // Guarded by mu_.
  size_t size_bytes_ = 0;          // Guarded by mu_.
  size_t total_lines_ = 0;         // Guarded by mu_.
};

// Splits a byte stream into lines: '\n' ends a line, a trailing '\r' is removed, and a line longer
// than `max_line_bytes` is cut into pieces so one runaway line cannot hold memory forever.
class LineSplitter {
 public:
  using LineFn = std::function<void(std::string_view line)>;

  explicit LineSplitter(LineFn on_line, size_t max_line_bytes = 16 * 1024);

  // Also tells the line being written, not ended yet, after each Feed that leaves one (a
  // progress bar drawn with dots or '\r' gets its newline only at the end). Whole lines are
  // still passed on once, as before. Null: not told.
  void SetPartialFn(LineFn on_partial) { on_partial_ = std::move(on_partial); }

  void Feed(std::string_view bytes);
  // Emits the pending partial line, if any (at end of stream).
  void Flush();

 private:
  void Emit(std::string_view line);

  LineFn on_line_;
  LineFn on_partial_;
  size_t max_line_bytes_;
  std::string partial_;
};

}  // namespace swapd
