#include "base/pacer.h"

#include <utility>

namespace swapd {

Pacer::Pacer(std::chrono::milliseconds every, std::function<void()> flush)
    : every_(every), flush_(std::move(flush)), thread_([this] { Run(); }) {}

Pacer::~Pacer() { Stop(); }

void Pacer::Poke() {
  std::lock_guard lock(mu_);
  if (due_ || stop_) return;
  due_ = true;
  wake_.notify_one();
}

void Pacer::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Pacer::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stop_ || due_; });
    if (stop_) return;
    if (wake_.wait_until(lock, flushed_ + every_, [&] { return stop_; })) return;
    due_ = false;
    flushed_ = Clock::now();
    lock.unlock();
    flush_();
    lock.lock();
  }
}

}  // namespace swapd
