// ConfigWatcher: --watch-config. Watches the directory that holds the config file (and the
// --config-dir, if any) with inotify rather than the file itself, so that an editor's atomic
// save (write a temporary file, rename it over the original), a symlinked file whose link is
// swapped (Kubernetes ConfigMaps), and files added to --config-dir are all seen. Calls
// `on_change` once a burst of relevant events has been quiet for `debounce`.
// Owns one thread; the destructor stops and joins it. `on_change` runs on that thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace swapd {

class ConfigWatcher {
 public:
  static Result<std::unique_ptr<ConfigWatcher>> Start(const std::string& config_path,
                                                      const std::string& config_dir,
                                                      std::chrono::milliseconds debounce,
                                                      std::function<void()> on_change);
  ~ConfigWatcher();
  ConfigWatcher(const ConfigWatcher&) = delete;
  ConfigWatcher& operator=(const ConfigWatcher&) = delete;

 private:
  struct Watch {
    int wd = -1;
    std::vector<std::string> names;  // file names that matter in this directory; empty = *.yaml
  };
  ConfigWatcher() = default;
  void Loop();
  bool Relevant(int wd, const std::string& name) const;

  int inotify_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: the destructor wakes the thread through it
  std::vector<Watch> watches_;
  std::chrono::milliseconds debounce_{0};
  std::function<void()> on_change_;
  std::thread thread_;
};

}  // namespace swapd
