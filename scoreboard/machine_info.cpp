#include "scoreboard/machine_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "base/text.h"

namespace swapd {
namespace {

namespace fs = std::filesystem;

// The first line of a file, trimmed; empty when it cannot be read.
std::string FirstLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return std::string(TrimSpace(line));
}

// The value of the first "key: value" (or "key\t: value") line of `path` whose key is `key`.
std::string Field(const fs::path& path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (colon != std::string::npos && TrimSpace(std::string_view(line).substr(0, colon)) == key) {
      return std::string(TrimSpace(std::string_view(line).substr(colon + 1)));
    }
  }
  return "";
}

std::string HostName(const std::string& proc_root) {
  std::string name = FirstLine(fs::path(proc_root) / "sys/kernel/hostname");
  if (!name.empty()) return name;
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) == 0) name = buffer;
  return name.empty() ? "unknown" : name;
}

std::string Cpu(const std::string& proc_root) {
  std::ifstream in(fs::path(proc_root) / "cpuinfo");
  std::string model;
  int cores = 0;  // logical CPUs, as the backends' thread counts see them
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key(TrimSpace(std::string_view(line).substr(0, colon)));
    if (key == "processor") ++cores;
    // x86 says "model name"; some ARM boards only "Model".
    if (model.empty() && (key == "model name" || key == "Model")) {
      model = std::string(TrimSpace(std::string_view(line).substr(colon + 1)));
    }
  }
  if (cores == 0) cores = static_cast<int>(std::max(sysconf(_SC_NPROCESSORS_ONLN), 0L));
  std::string text = model.empty() ? "unknown CPU" : model;
  if (cores > 0) text += ", " + std::to_string(cores) + (cores == 1 ? " core" : " cores");
  return text;
}

std::string Ram(const std::string& proc_root) {
  const std::string total = Field(fs::path(proc_root) / "meminfo", "MemTotal");  // "65536 kB"
  const double kib = std::atof(total.c_str());
  if (kib <= 0) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.0f GiB RAM", kib / (1024.0 * 1024.0));
  return text;
}

std::vector<fs::path> SortedEntries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Gpus(const std::string& proc_root, const std::string& sys_root) {
  std::vector<std::string> gpus;
  // The NVIDIA driver names its GPUs; /sys only has their PCI ids.
  for (const fs::path& gpu : SortedEntries(fs::path(proc_root) / "driver/nvidia/gpus")) {
    const std::string model = Field(gpu / "information", "Model");
    if (!model.empty()) gpus.push_back(model);
  }
  const bool named_nvidia = !gpus.empty();
  const std::map<std::string, std::string> vendors = {
      {"0x10de", "NVIDIA"}, {"0x1002", "AMD"}, {"0x8086", "Intel"}};
  for (const fs::path& card : SortedEntries(fs::path(sys_root) / "class/drm")) {
    const std::string name = card.filename().string();
    // card0, card1, ...: not their connectors (card0-HDMI-A-1) or render nodes.
    if (!name.starts_with("card") || name.find('-') != std::string::npos) continue;
    const std::string vendor = FirstLine(card / "device/vendor");
    if (vendor.empty() || (vendor == "0x10de" && named_nvidia)) continue;
    std::string product = FirstLine(card / "device/product_name");  // amdgpu, when the board says
    if (product.empty()) {
      auto known = vendors.find(vendor);
      product = (known == vendors.end() ? "GPU vendor " + vendor : known->second + " GPU") +
                " (device " + FirstLine(card / "device/device") + ")";
    }
    gpus.push_back(product);
  }
  return gpus;
}

std::string Kernel(const std::string& proc_root) {
  std::string release = FirstLine(fs::path(proc_root) / "sys/kernel/osrelease");
  if (release.empty()) {
    utsname names{};
    if (uname(&names) == 0) release = names.release;
  }
  return release.empty() ? "" : "Linux " + release;
}

}  // namespace

std::string MachineDescription(const std::string& proc_root, const std::string& sys_root) {
  std::string text = "host: " + HostName(proc_root) + " (" + Cpu(proc_root) + ")";
  if (std::string ram = Ram(proc_root); !ram.empty()) text += ", " + ram;
  const std::vector<std::string> gpus = Gpus(proc_root, sys_root);
  for (size_t i = 0; i < gpus.size(); ++i) text += (i == 0 ? ", GPU: " : " + ") + gpus[i];
  if (std::string kernel = Kernel(proc_root); !kernel.empty()) text += ", " + kernel;
  return text;
}

}  // namespace swapd
