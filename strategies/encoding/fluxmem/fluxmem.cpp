#include "strategies/encoding/fluxmem/fluxmem.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/nn/rope.h"
#include "engine/visual_token_reducer.h"
#include "engine/visual_units.h"
#include "strategies/encoding/fluxmem/fluxmem_rules.h"

namespace svqa {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Hands the clip's reduced units back one by one, for the engine's reduce_units (which keeps each
// kept token's mRoPE position, renumbers 1-D ones back to back, and checks what a reducer returns).
class ClipReplay final : public VisualTokenReducer {
 public:
  explicit ClipReplay(std::vector<FluxmemFrameResult> results) : results_(std::move(results)) {}
  ReducedTokens reduce(const VisualUnit& unit) override {
    (void)unit;
    return results_.at(next_++).kept;
  }

 private:
  std::vector<FluxmemFrameResult> results_;
  size_t next_ = 0;
};

// A unit as FluxMem reads it: its tokens on the host and each token's grid cell, from its (h, w)
// mRoPE positions (Qwen2.5-VL, as the reference reads them) or, with 1-D positions (LLaVA-OneVision),
// from its place in the frame's square of pooled tokens (row-major).
FluxmemFrame frame_of(const VisualUnit& u, bool mrope) {
  const at::Tensor tokens = u.tokens.to(at::kCPU);
  if (mrope) {
    const at::Tensor positions = u.positions.to(at::kCPU, at::kLong);
    const at::Tensor h = positions[1], w = positions[2];
    return {tokens, h - h.min(), w - w.min()};
  }
  const int64_t n = tokens.size(0), side = std::llround(std::sqrt(static_cast<double>(n)));
  if (side * side != n)
    throw std::invalid_argument("encoding fluxmem: a frame of " + std::to_string(n) + " tokens is not a square grid");
  const at::Tensor index = at::arange(n, at::kLong);
  return {tokens, index.div(side, "floor"), index.remainder(side)};
}

const char* stage_name(FluxmemStage s) {
  return s == FluxmemStage::ShortTerm ? "short" : s == FluxmemStage::MidTerm ? "mid" : "long";
}

}  // namespace

void Fluxmem::begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) {
  (void)bank;
  if (backbone.manifest().architecture == Architecture::Qwen3_VL)
    throw std::invalid_argument("encoding fluxmem: Qwen3-VL's temporal patches carry timestamp text, which FluxMem's "
                                "token reduction does not handle; use Qwen2.5-VL (the reference's) or LLaVA-OneVision");
  mrope_ = !backbone.manifest().text.mrope_section.empty();
  sink_ids_ = sink_ids;
  frames_per_unit_ = VisualUnitMaker::frames_per_unit_of(backbone);
  held_.clear();
  question_bank_.reset();
  fed_frames_.clear(), kept_.clear(), merged_away_.clear(), stages_.clear();
  vision_s_ = reduce_s_ = prefill_s_ = 0;
  window_ = std::make_unique<SlidingWindow>(std::max<int64_t>(1, static_cast<int64_t>(sink_ids.size())));
  window_->begin(backbone, sink_ids_);  // the sinks, for sinks() before the first question
  next_position_ = static_cast<int64_t>(sink_ids.size());
}

void Fluxmem::encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) {
  (void)backbone, (void)bank;
  held_.add(units, frames_per_unit_);
  held_.keep_last(units_held());
}

size_t Fluxmem::units_held() const {
  return static_cast<size_t>(std::max<int64_t>(1, options_.max_frames / frames_per_unit_));
}

std::vector<size_t> Fluxmem::clip_units(double window_start) const {
  const size_t n = held_.units().size();
  size_t i = held_.first_starting_at(window_start);
  std::vector<size_t> out;
  for (i = std::max(i, n - std::min(n, units_held())); i < n; ++i) out.push_back(i);
  return out;
}

const MemoryBank* Fluxmem::prepare_for_question(Backbone& backbone, const QuestionInfo& question, MemoryBank& bank) {
  (void)bank;
  fed_frames_.clear(), kept_.clear(), merged_away_.clear(), stages_.clear();
  vision_s_ = reduce_s_ = prefill_s_ = 0;
  question_bank_ = std::make_unique<MemoryBank>(MemoryBankOptions{backbone.num_layers(), backbone.device(), -1, ""});
  next_position_ = static_cast<int64_t>(sink_ids_.size());
  const auto clip = clip_units(question.window_start);
  if (clip.empty()) return question_bank_.get();  // a question before the first frame: the prompt alone

  auto t0 = std::chrono::steady_clock::now();
  const std::vector<VisualUnit> units =
      held_.vision(backbone, clip, question.time, static_cast<int64_t>(sink_ids_.size()), fed_frames_, "fluxmem");
  vision_s_ = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  std::vector<FluxmemFrame> frames;
  for (const auto& u : units) frames.push_back(frame_of(u, mrope_)), next_position_ = std::max(next_position_, svqa::next_position(u.positions));
  const FluxmemSettings settings{options_.short_term_frames / frames_per_unit_, options_.mid_term_frames / frames_per_unit_,
                                 options_.direct_drop_similarity};
  std::vector<FluxmemFrameResult> results = fluxmem_reduce_clip(frames, settings);
  for (const auto& r : results)
    stages_.push_back(stage_name(r.stage)), kept_.push_back(r.kept.rows.numel()), merged_away_.push_back(r.merged_away);
  ClipReplay replay(std::move(results));
  const std::vector<VisualUnit> kept = reduce_units(replay, units, mrope_);
  reduce_s_ = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  window_ = held_.prefill(backbone, sink_ids_, kept, clip, *question_bank_);
  prefill_s_ = seconds_since(t0);
  return question_bank_.get();
}

void Fluxmem::add_record_fields(nlohmann::json& extra) const {
  extra["fluxmem"] = {{"frames_fed", fed_frames_}, {"stages", stages_}, {"kept_tokens", kept_},
                      {"merged_away", merged_away_}, {"vision_s", vision_s_}, {"reduce_s", reduce_s_},
                      {"prefill_s", prefill_s_}};
}

}  // namespace svqa
