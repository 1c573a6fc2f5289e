#include "strategies/encoding/fresh_frames/fresh_frames.h"

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "engine/visual_units.h"
#include "core/nn/rope.h"
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
  held_.add(units, frames_per_unit_);
  if (options_.sampling == "recent") held_.keep_last(static_cast<size_t>(units_wanted()));  // never needs more
}

std::vector<size_t> FreshFrames::chosen_units(double window_start) const {
  // The held units inside the question's context window: a suffix of held_ (held in time order).
  const auto skip = static_cast<int64_t>(held_.first_starting_at(window_start));
  const int64_t n = static_cast<int64_t>(held_.units().size()) - skip, k = std::min(n, units_wanted());
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
  const std::vector<VisualUnit> units = held_.vision(backbone, chosen, question.time, n_init, fed_frames_, "fresh_frames");
  vision_s_ = seconds_since(t0);

  // Prefill: plain causal attention over [sinks | units] (a window that never fills).
  t0 = std::chrono::steady_clock::now();
  window_ = held_.prefill(backbone, sink_ids_, units, chosen, *question_bank_);
  for (const auto& u : units) next_position_ = std::max(next_position_, svqa::next_position(u.positions));
  prefill_s_ = seconds_since(t0);
  return question_bank_.get();
}

void FreshFrames::add_record_fields(nlohmann::json& extra) const {
  int64_t held_bytes = 0, held_frames = 0;
  for (const auto& h : held_.units()) held_bytes += h.rgb.numel(), held_frames += h.rgb.size(0);
  extra["fresh_frames"] = {{"sampling", options_.sampling}, {"frames_fed", fed_frames_},
                           {"frames_held", held_frames}, {"held_bytes", held_bytes},
                           {"vision_s", vision_s_}, {"prefill_s", prefill_s_}};
}

}  // namespace svqa
