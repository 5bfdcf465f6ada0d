#include "api/query_params.h"

#include "base/parse_int.h"

namespace swapd {

std::string TrimBlanks(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return "";
  return std::string(text.substr(begin, text.find_last_not_of(" \t") - begin + 1));
}

Result<std::optional<int64_t>> QueryInteger(const HttpRequest& req, const char* name, int64_t min,
                                            int64_t max, const std::string& wrong) {
  const std::optional<std::string_view> raw = req.Param(name);
  if (!raw) return std::optional<int64_t>();
  const std::string text = TrimBlanks(*raw);
  if (text.empty()) return std::optional<int64_t>();
  int64_t value = 0;
  if (!ParseInt64(text, &value) || value < min || value > max) {
    return Status::Error(ErrorCode::kInvalidArgument, wrong);
  }
  return std::optional<int64_t>(value);
}

}  // namespace swapd
