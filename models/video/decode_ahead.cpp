#include "models/video/decode_ahead.h"

#include <ATen/Parallel.h>

#include <utility>

namespace svqa {

DecodeAhead::DecodeAhead(Produce produce, int64_t capacity_bytes)
    : produce_(std::move(produce)), capacity_(capacity_bytes), thread_([this] { run(); }) {}

DecodeAhead::~DecodeAhead() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void DecodeAhead::run() {
  at::init_num_threads();  // ATen's intra-op threads as the process set them (runtime.threads), for `produce`'s ops
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || queue_.size() < 2 || bytes_ < capacity_; });
      if (stopping_) return;
    }
    QueuedFrame frame;
    bool more = false;
    std::exception_ptr error;
    try {
      more = produce_(frame);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (more) {
      bytes_ += frame.bytes();
      queue_.push_back(std::move(frame));
    } else {
      ended_ = true;
      error_ = error;
    }
    changed_.notify_all();
    if (!more) return;
  }
}

bool DecodeAhead::pop(QueuedFrame& out) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !queue_.empty() || ended_; });
  if (queue_.empty()) {
    if (error_) std::rethrow_exception(error_);
    return false;
  }
  out = std::move(queue_.front());
  queue_.pop_front();
  bytes_ -= out.bytes();
  changed_.notify_all();
  return true;
}

}  // namespace svqa
