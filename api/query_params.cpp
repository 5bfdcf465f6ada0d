#include "api/query_params.h"

#include "base/parse_int.h"
#include "base/text.h"

namespace swapd {

Result<std::optional<int64_t>> QueryInteger(const HttpRequest& req, const char* name, int64_t min,
                                            int64_t max, const std::string& wrong) {
  const std::optional<std::string_view> raw = req.Param(name);
  if (!raw) return std::optional<int64_t>();
  const std::string text(TrimSpace(*raw));
  if (text.empty()) return std::optional<int64_t>();
  int64_t value = 0;
  if (!ParseInt64(text, &value) || value < min || value > max) {
    return Status::Error(ErrorCode::kInvalidArgument, wrong);
  }
  return std::optional<int64_t>(value);
}

}  // namespace swapd
