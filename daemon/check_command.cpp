// STUB: replaced by the check implementation.
#include "daemon/check_command.h"

namespace swapd {

int RunCheck(const Options&, std::ostream&, std::ostream& err) {
  err << "not implemented\n";
  return 1;
}
std::string DescribeConfig(const Config&) { return {}; }
std::string DescribeConfigJson(const Config&) { return {}; }

}  // namespace swapd
