#include "daemon/config_watcher.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace swapd {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kEvents =
    IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MODIFY;

bool IsYaml(const std::string& name) {
  auto ends = [&](const char* suffix) {
    std::string s = suffix;
    return name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".yaml") || ends(".yml");
}

std::string DirOf(const fs::path& path) {
  fs::path dir = path.parent_path();
  return dir.empty() ? "." : dir.string();
}

}  // namespace

Result<std::unique_ptr<ConfigWatcher>> ConfigWatcher::Start(const std::string& config_path,
                                                            const std::string& config_dir,
                                                            std::chrono::milliseconds debounce,
                                                            std::function<void()> on_change) {
  std::unique_ptr<ConfigWatcher> w(new ConfigWatcher());
  w->debounce_ = debounce;
  w->on_change_ = std::move(on_change);
  w->inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  w->wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (w->inotify_fd_ < 0 || w->wake_fd_ < 0) {
    return Status::Error(ErrorCode::kInternal,
                         std::string("--watch-config: inotify: ") + std::strerror(errno));
  }
  auto add = [&](const std::string& dir, std::vector<std::string> names) -> Status {
    int wd = inotify_add_watch(w->inotify_fd_, dir.c_str(), kEvents);
    if (wd < 0) {
      return Status::Error(ErrorCode::kInvalidArgument,
                           "--watch-config: cannot watch " + dir + ": " + std::strerror(errno));
    }
    for (auto& existing : w->watches_) {
      if (existing.wd != wd) continue;
      // The same directory twice (the file's target lives beside it): merge the names; an
      // empty list (any *.yaml) stays the wider one.
      if (!existing.names.empty() && !names.empty()) {
        existing.names.insert(existing.names.end(), names.begin(), names.end());
      } else {
        existing.names.clear();
      }
      return Status::Ok();
    }
    w->watches_.push_back(Watch{wd, std::move(names)});
    return Status::Ok();
  };
  if (!config_path.empty()) {
    fs::path path(config_path);
    // The file's own name, plus "..data", the link Kubernetes swaps to update a ConfigMap.
    if (Status s = add(DirOf(path), {path.filename().string(), "..data"}); !s.ok()) return s;
    std::error_code ec;
    if (fs::is_symlink(path, ec)) {
      fs::path target = fs::canonical(path, ec);
      if (!ec) {
        if (Status s = add(DirOf(target), {target.filename().string()}); !s.ok()) return s;
      }
    }
  }
  if (!config_dir.empty()) {
    if (Status s = add(config_dir, {}); !s.ok()) return s;
  }
  ConfigWatcher* raw = w.get();
  w->thread_ = std::thread([raw] { raw->Loop(); });
  return w;
}

ConfigWatcher::~ConfigWatcher() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  if (inotify_fd_ >= 0) close(inotify_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

bool ConfigWatcher::Relevant(int wd, const std::string& name) const {
  for (const Watch& w : watches_) {
    if (w.wd != wd) continue;
    if (w.names.empty()) return IsYaml(name);
    for (const auto& n : w.names) {
      if (n == name) return true;
    }
  }
  return false;
}

void ConfigWatcher::Loop() {
  using Clock = std::chrono::steady_clock;
  // When to call on_change_, once events went quiet; max() = nothing pending.
  Clock::time_point due = Clock::time_point::max();
  alignas(inotify_event) char buffer[16 * 1024];
  for (;;) {
    int timeout = -1;
    if (due != Clock::time_point::max()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(due - Clock::now());
      timeout = static_cast<int>(std::max<int64_t>(0, left.count()));
    }
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    int ready = poll(fds, 2, timeout);
    if (ready < 0 && errno != EINTR) {
      spdlog::error("--watch-config: poll: {}; no longer watching", std::strerror(errno));
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents != 0) {
      for (;;) {
        ssize_t n = read(inotify_fd_, buffer, sizeof buffer);
        if (n <= 0) break;
        for (char* p = buffer; p < buffer + n;) {
          auto* event = reinterpret_cast<inotify_event*>(p);
          std::string name = event->len > 0 ? std::string(event->name) : std::string();
          if (Relevant(event->wd, name)) due = Clock::now() + debounce_;
          p += sizeof(inotify_event) + event->len;
        }
      }
    }
    if (due != Clock::time_point::max() && Clock::now() >= due) {
      due = Clock::time_point::max();
      on_change_();
    }
  }
}

}  // namespace swapd
