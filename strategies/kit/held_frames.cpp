#include "strategies/kit/held_frames.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "strategies/kit/unit_block.h"

namespace svqa {

void HeldFrames::add(const std::vector<VisualUnit>& units, int64_t frames_per_unit) {
  for (const auto& u : units) {
    if (u.end_time > u.start_time && frames_per_unit > 1)
      fps_ = static_cast<double>(frames_per_unit - 1) / (u.end_time - u.start_time);
    units_.push_back({u.rgb.clone(), u.first_frame, u.last_frame, u.start_time, u.end_time});
  }
}

void HeldFrames::keep_last(size_t n) {
  if (units_.size() > n) units_.erase(units_.begin(), units_.end() - static_cast<std::ptrdiff_t>(n));
}

size_t HeldFrames::first_starting_at(double t) const {
  return static_cast<size_t>(
      std::find_if(units_.begin(), units_.end(), [&](const Unit& h) { return h.start_time >= t; }) - units_.begin());
}

std::vector<VisualUnit> HeldFrames::vision(Backbone& backbone, const std::vector<size_t>& chosen,
                                           double question_time, int64_t n_init, std::vector<int64_t>& fed,
                                           const char* who) const {
  std::vector<at::Tensor> rgb;
  Frames frames;
  for (const size_t i : chosen) {
    const Unit& h = units_[i];
    if (h.end_time > question_time) throw std::logic_error(std::string(who) + ": a held frame ends after its question");
    rgb.push_back(h.rgb);
    for (int64_t f = h.first_frame; f <= h.last_frame; ++f) {
      fed.push_back(f);
      frames.timestamps.push_back(h.start_time + static_cast<double>(f - h.first_frame) / fps_);
    }
  }
  frames.rgb = at::cat(rgb);
  frames.fps = fps_;
  VisualUnitMaker maker(backbone, frames);
  return maker.make(0, frames.rgb.size(0), n_init, n_init);
}

std::unique_ptr<SlidingWindow> HeldFrames::prefill(Backbone& backbone, const std::vector<int64_t>& sink_ids,
                                                   const std::vector<VisualUnit>& units,
                                                   const std::vector<size_t>& chosen, MemoryBank& bank) const {
  std::vector<WindowInput> inputs;
  std::vector<size_t> fed;  // the units with tokens left
  int64_t tokens = static_cast<int64_t>(sink_ids.size());
  for (size_t i = 0; i < units.size(); ++i) {
    if (units[i].tokens.size(0) == 0) continue;
    inputs.push_back({units[i].tokens, units[i].positions, units[i].deepstack});
    fed.push_back(i), tokens += units[i].tokens.size(0);
  }
  auto window = std::make_unique<SlidingWindow>(tokens);  // a window that never fills: plain causal attention
  window->begin(backbone, sink_ids);
  auto outputs = window->prefill(backbone, inputs);
  for (size_t k = 0; k < fed.size(); ++k) {
    VisualUnit u = units[fed[k]];
    const Unit& h = units_[chosen[fed[k]]];  // the block keeps the frames and times it shows
    u.first_frame = h.first_frame, u.last_frame = h.last_frame, u.start_time = h.start_time, u.end_time = h.end_time;
    bank.add(rekv_unit_block(u, std::move(outputs[k])));
  }
  return window;
}

}  // namespace svqa
