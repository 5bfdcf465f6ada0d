#include "base/thread_name.h"

#include <pthread.h>

#include <string>

namespace swapd {

void NameThisThread(std::string_view name) {
  constexpr size_t kMaxName = 15;  // without the terminator
  pthread_setname_np(pthread_self(), std::string(name.substr(0, kMaxName)).c_str());
}

}  // namespace swapd
