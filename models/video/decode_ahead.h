#pragma once
// Decoding ahead of the reader: a thread of its own fills a bounded queue of frames (decoded, and
// prepared for the model where the reader was given a preparer), so decoding and preprocessing
// overlap whatever consumes them (the vision tower, a file writer) and a run's wall time is the
// slower of the two rather than their sum.

#include <ATen/ATen.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace svqa {

struct QueuedFrame {
  at::Tensor rgb;       // uint8 [H, W, 3]
  at::Tensor prepared;  // the frame as the model takes it ([1, ...]), undefined where none was made
  double stamp = 0, presented = 0;

  int64_t bytes() const { return static_cast<int64_t>(rgb.nbytes() + (prepared.defined() ? prepared.nbytes() : 0)); }
};

class DecodeAhead {
 public:
  // `produce` gives the next frame, false at the end (it may throw: the reader gets the exception
  // where the frame would have been). At most `capacity_bytes` of frames (QueuedFrame::bytes) wait, two at least.
  using Produce = std::function<bool(QueuedFrame&)>;
  DecodeAhead(Produce produce, int64_t capacity_bytes);
  ~DecodeAhead();  // stops the thread (after the frame it is decoding) and joins it
  DecodeAhead(const DecodeAhead&) = delete;
  DecodeAhead& operator=(const DecodeAhead&) = delete;

  // The next frame, false at the end; rethrows what `produce` threw.
  bool pop(QueuedFrame& out);

 private:
  void run();

  Produce produce_;
  const int64_t capacity_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<QueuedFrame> queue_;
  int64_t bytes_ = 0;
  bool ended_ = false, stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace svqa
