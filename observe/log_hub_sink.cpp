#include "observe/log_hub_sink.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <mutex>

namespace swapd {
namespace {

// Formats each message like the stderr sink does (without colours) and appends it to the hub.
class LogHubSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit LogHubSink(std::shared_ptr<LogHub> hub) : hub_(std::move(hub)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    std::string_view line(formatted.data(), formatted.size());
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    hub_->Append(LogHub::kSwapdSource, line);
  }
  void flush_() override {}

 private:
  std::shared_ptr<LogHub> hub_;
};

}  // namespace

void TeeDefaultLoggerInto(std::shared_ptr<LogHub> hub) {
  auto sink = std::make_shared<LogHubSink>(std::move(hub));
  sink->set_pattern("%Y-%m-%d %H:%M:%S.%e %l %v");
  spdlog::default_logger()->sinks().push_back(std::move(sink));
}

}  // namespace swapd
