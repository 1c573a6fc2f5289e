#include "strategies/encoding/fresh_frames/fresh_frames.h"

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "engine/visual_units.h"
#include "core/nn/rope.h"
#include "strategies/kit/unit_block.h"
#include "strategies/kit/uniform_indices.h"

namespace svqa {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int64_t FreshFrames::units_wanted() const { return std::max<int64_t>(1, options_.frames / frames_per_unit_); }

void FreshFrames::begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) {
  (void)bank;
  sink_ids_ = sink_ids;
  frames_per_unit_ = VisualUnitMaker::frames_per_unit_of(backbone);
  held_.clear();
  question_bank_.reset();
  fed_frames_.clear();
  vision_s_ = prefill_s_ = 0;
  window_ = std::make_unique<SlidingWindow>(std::max<int64_t>(1, static_cast<int64_t>(sink_ids.size())));
  window_->begin(backbone, sink_ids_);  // the sinks, for sinks() before the first question
  next_position_ = static_cast<int64_t>(sink_ids.size());
}

void FreshFrames::encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) {
  (void)backbone, (void)bank;
  for (const auto& u : units) {
    if (u.end_time > u.start_time && frames_per_unit_ > 1) fps_ = static_cast<double>(frames_per_unit_ - 1) / (u.end_time - u.start_time);
    held_.push_back({u.rgb.clone(), u.first_frame, u.last_frame, u.start_time, u.end_time});
  }
  // `recent` never needs more than its last N frames.
  if (options_.sampling == "recent" && static_cast<int64_t>(held_.size()) > units_wanted())
    held_.erase(held_.begin(), held_.end() - units_wanted());
}

std::vector<size_t> FreshFrames::chosen_units(double window_start) const {
  // The held units inside the question's context window: a suffix of held_ (held in time order).
  const auto first = std::find_if(held_.begin(), held_.end(), [&](const Held& h) { return h.start_time >= window_start; });
  const int64_t skip = first - held_.begin();
  const int64_t n = static_cast<int64_t>(held_.size()) - skip, k = std::min(n, units_wanted());
  std::vector<size_t> out;
  if (options_.sampling == "recent") {
    for (int64_t i = n - k; i < n; ++i) out.push_back(static_cast<size_t>(skip + i));
    return out;
  }
  for (const int64_t i : uniform_indices(n, k)) out.push_back(static_cast<size_t>(skip + i));  // linspace, truncated
  return out;
}

const MemoryBank* FreshFrames::prepare_for_question(Backbone& backbone, const QuestionInfo& question,
                                                    MemoryBank& bank) {
  (void)bank;
  fed_frames_.clear();
  question_bank_ = std::make_unique<MemoryBank>(MemoryBankOptions{backbone.num_layers(), backbone.device(), -1, ""});
  const auto chosen = chosen_units(question.window_start);
  const int64_t n_init = static_cast<int64_t>(sink_ids_.size());
  next_position_ = n_init;
  if (chosen.empty()) {  // a question before the first frame: the model on the prompt alone
    vision_s_ = prefill_s_ = 0;
    return question_bank_.get();
  }
  // Vision: the chosen frames as one fresh video laid out right after the sinks.
  auto t0 = std::chrono::steady_clock::now();
  std::vector<at::Tensor> rgb;
  Frames frames;
  for (const size_t i : chosen) {
    const Held& h = held_[i];
    if (h.end_time > question.time) throw std::logic_error("fresh_frames: a held frame ends after its question");
    rgb.push_back(h.rgb);
    for (int64_t f = h.first_frame; f <= h.last_frame; ++f) {
      fed_frames_.push_back(f);
      frames.timestamps.push_back(h.start_time + static_cast<double>(f - h.first_frame) / fps_);
    }
  }
  frames.rgb = at::cat(rgb);
  frames.fps = fps_;
  const int64_t count = frames.rgb.size(0);
  VisualUnitMaker maker(backbone, frames);
  std::vector<VisualUnit> units = maker.make(0, count, n_init, n_init);
  vision_s_ = seconds_since(t0);

  // Prefill: plain causal attention over [sinks | units] (a window that never fills).
  t0 = std::chrono::steady_clock::now();
  std::vector<WindowInput> inputs;
  int64_t tokens = n_init;
  for (const auto& u : units) inputs.push_back({u.tokens, u.positions, u.deepstack}), tokens += u.tokens.size(0);
  window_ = std::make_unique<SlidingWindow>(tokens);
  window_->begin(backbone, sink_ids_);
  auto outputs = window_->prefill(backbone, inputs);
  for (size_t i = 0; i < units.size(); ++i) {
    const Held& h = held_[chosen[i]];  // the block keeps the frames and times it shows
    units[i].first_frame = h.first_frame, units[i].last_frame = h.last_frame;
    units[i].start_time = h.start_time, units[i].end_time = h.end_time;
    next_position_ = std::max(next_position_, svqa::next_position(units[i].positions));
    question_bank_->add(rekv_unit_block(units[i], std::move(outputs[i])));
  }
  prefill_s_ = seconds_since(t0);
  return question_bank_.get();
}

void FreshFrames::add_record_fields(nlohmann::json& extra) const {
  int64_t held_bytes = 0, held_frames = 0;
  for (const auto& h : held_) held_bytes += h.rgb.numel(), held_frames += h.rgb.size(0);
  extra["fresh_frames"] = {{"sampling", options_.sampling}, {"frames_fed", fed_frames_},
                           {"frames_held", held_frames}, {"held_bytes", held_bytes},
                           {"vision_s", vision_s_}, {"prefill_s", prefill_s_}};
}

}  // namespace svqa
