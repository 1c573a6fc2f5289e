#pragma once
// The source frames of an at-question encoder (fresh_frames, fluxmem): nothing is prefilled while
// the stream plays; the units' frames are held, and at a question some of them go through
// preprocessing and the vision tower as one fresh video laid out after the sinks, and are
// prefilled with plain causal attention into a bank of the question's own.

#include <cstdint>
#include <memory>
#include <vector>

#include "core/memory/memory_bank.h"
#include "engine/visual_units.h"
#include "strategies/kit/sliding_window.h"

namespace svqa {

class HeldFrames {
 public:
  struct Unit {
    at::Tensor rgb;  // uint8 [f, H, W, 3], a copy (not a view of the decoder's chunk)
    int64_t first_frame = 0, last_frame = 0;
    double start_time = 0, end_time = 0;
  };

  void clear() { units_.clear(), fps_ = 1; }
  // Copies the units' frames; a unit of several frames also tells the stream's rate.
  void add(const std::vector<VisualUnit>& units, int64_t frames_per_unit);
  void keep_last(size_t n);  // drops all but the last n units
  const std::vector<Unit>& units() const { return units_; }
  double fps() const { return fps_; }
  // Index of the first held unit starting at or after `t` (units are held in time order).
  size_t first_starting_at(double t) const;

  // The chosen units through preprocessing and the vision tower as one video starting at position
  // `n_init`; appends the stream indices of the frames fed to `fed`. Throws if a chosen unit ends
  // after `question_time` (`who` names the strategy).
  std::vector<VisualUnit> vision(Backbone& backbone, const std::vector<size_t>& chosen, double question_time,
                                 int64_t n_init, std::vector<int64_t>& fed, const char* who) const;
  // Prefills [sinks | units with tokens] with plain causal attention into `bank`, one block per
  // unit, each block keeping the frames and times of held unit chosen[i]. Returns the window (its
  // sinks serve the answer).
  std::unique_ptr<SlidingWindow> prefill(Backbone& backbone, const std::vector<int64_t>& sink_ids,
                                         const std::vector<VisualUnit>& units, const std::vector<size_t>& chosen,
                                         MemoryBank& bank) const;

 private:
  std::vector<Unit> units_;
  double fps_ = 1;  // the stream's rate, for Qwen2.5-VL's temporal positions
};

}  // namespace svqa
