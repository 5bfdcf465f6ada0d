// The dashboard's files, compiled in (ui/CMakeLists.txt): served at /ui by api/ui_routes.cpp.
#pragma once

#include <string_view>
#include <vector>

namespace swapd {

struct UiAsset {
  std::string_view name;  // "index.html", "app.js", ...
  std::string_view bytes;
};

const std::vector<UiAsset>& UiAssets();

}  // namespace swapd
