#pragma once
// FluxMem (Xie et al., CVPR 2026; reference code YiwengXie/FluxMem, Qwen2.5-VL) as its code runs a
// streaming benchmark (evaluation/ovobench/ovobench.py `get_response`): at each question the clip of
// the last `stream.context_window_s` seconds (its time_window_size, at most `max_frames` frames) goes
// through the vision tower as one video, FluxMem's memory thins and merges the clip's visual tokens
// before the first LLM layer (fluxmem_rules.h: short-term frames whole, mid-term frames pruned against
// their neighbours in time, long-term frames merged in space), and the LLM prefills what is left with
// plain causal attention after the sinks, each kept token at its own mRoPE position, into a bank of the
// question's own (the bank prepare_for_question returns; retrieval `full_context` answers from it). Nothing is prefilled
// while the stream plays: the encoder holds the frames of the last `max_frames`.
// svqa's extension: on LLaVA-OneVision (1-D positions, one frame a unit) a frame's pooled tokens are
// read as the square grid they form, row-major, short/mid-term counted in frames, and the kept tokens
// numbered back to back as a shorter sequence. Qwen3-VL is refused (its units carry timestamp text).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "engine/strategy.h"
#include "strategies/kit/held_frames.h"
#include "strategies/kit/sliding_window.h"

namespace svqa {

struct FluxmemOptions {
  int64_t short_term_frames = 8;
  int64_t mid_term_frames = 64;
  double direct_drop_similarity = 0.8;
  int64_t max_frames = 256;
  static void declare(Schema<FluxmemOptions>& s) {
    s.field("short_term_frames", &FluxmemOptions::short_term_frames,
            "frames whose tokens are all kept, the latest (SHORT_FRAMES; / 2 temporal patches on Qwen2.5-VL)")
        .min(2)
        .max(4096);
    s.field("mid_term_frames", &FluxmemOptions::mid_term_frames,
            "frames kept pruned but not merged after the short-term ones (MEDIUM_FRAMES; / 2 temporal patches)")
        .min(0)
        .max(4096);
    s.field("direct_drop_similarity", &FluxmemOptions::direct_drop_similarity,
            "a mid-term token whose cosine similarity with the next frame's 3x3 neighbourhood exceeds this is "
            "dropped (direct_drop_sim_threshold)")
        .min(0)
        .max(1);
    s.field("max_frames", &FluxmemOptions::max_frames,
            "frames of the clip fed at a question at most, the last ones (MAX_FRAMES)")
        .min(2)
        .max(4096);
  }
};

class Fluxmem final : public EncodingStrategy {
 public:
  explicit Fluxmem(FluxmemOptions options) : options_(options) {}

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override;
  // Holds the units' source frames (the last max_frames); the stream's bank stays empty.
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override;
  // The question's clip through vision, FluxMem and the causal prefill into the question's own bank,
  // which it returns (its traits, at registration: memory built at the question, vision run there).
  const MemoryBank* prepare_for_question(Backbone& backbone, const QuestionInfo& question, MemoryBank& bank) override;
  const SinkKv& sinks() const override { return window_->sinks(); }
  int64_t next_position() const override { return next_position_; }
  // Under "fluxmem": the frames fed (stream indices) and, per temporal patch, its stage (short, mid,
  // long), tokens kept and tokens merged away; the seconds of vision, FluxMem and prefill.
  void add_record_fields(nlohmann::json& extra) const override;

 private:
  // The question's clip: held units starting at or after `window_start`, the last max_frames' worth.
  std::vector<size_t> clip_units(double window_start) const;
  size_t units_held() const;  // max_frames' worth

  FluxmemOptions options_;
  std::vector<int64_t> sink_ids_;
  int64_t frames_per_unit_ = 2;
  bool mrope_ = true;  // Qwen2.5-VL: grid cells and kept positions from mRoPE; LLaVA-OneVision: 1-D
  HeldFrames held_;
  std::unique_ptr<SlidingWindow> window_;  // the question's [sinks | kept tokens], plain causal
  std::unique_ptr<MemoryBank> question_bank_;
  int64_t next_position_ = 0;
  std::vector<int64_t> fed_frames_, kept_, merged_away_;
  std::vector<std::string> stages_;
  double vision_s_ = 0, reduce_s_ = 0, prefill_s_ = 0;
};

}  // namespace svqa
