#pragma once
// The papers' no-memory baselines: the plain model answering from N frames fed fresh at the
// question. Nothing is prefilled while the stream plays: the encoder holds the source frames of
// the units it is given (`recent`: the last N frames' units only). When a question comes
// (prepare_for_question) it chooses N frames' units — `uniform`: evenly over the stream so far
// (linspace over the frames before the question, ReKV's "uniform sampling" row); `recent`: the last
// ones (SimpleStream's baseline, 4 frames in its paper) — runs them through preprocessing and the
// vision tower, and prefills [sinks | those units] with plain causal attention at back-to-back
// positions into a bank of their own, which it returns. Retrieval `full_context` then answers from
// that bank, which is the plain model on [sink prompt | N frames | answer prompt]. The vision and
// prefill of the N frames are part of the question's time to first token; the bank of N frames is
// the memory its records account, and extra.fresh_frames says what was held besides.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "engine/strategy.h"
#include "strategies/kit/held_frames.h"
#include "strategies/kit/sliding_window.h"

namespace svqa {

struct FreshFramesOptions {
  std::string sampling = "uniform";
  int64_t frames = 4;
  static void declare(Schema<FreshFramesOptions>& s) {
    s.field("sampling", &FreshFramesOptions::sampling,
            "uniform: N frames evenly over the stream before the question (ReKV's uniform-sampling baseline); "
            "recent: the last N frames (SimpleStream)")
        .one_of({"uniform", "recent"});
    s.field("frames", &FreshFramesOptions::frames,
            "N: frames fed to the model at each question (SimpleStream: 4); on Qwen2.5-VL N / 2 temporal patches")
        .min(1)
        .max(4096);
  }
};

class FreshFrames final : public EncodingStrategy {
 public:
  explicit FreshFrames(FreshFramesOptions options) : options_(std::move(options)) {}

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override;
  // Holds the units' source frames; the stream's bank stays empty.
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override;
  // Chooses the question's units, runs vision and the causal prefill into a bank of the question's
  // own, which it returns (its traits: MemoryWrites::AtQuestion, no visual tokens read before).
  const MemoryBank* prepare_for_question(Backbone& backbone, const QuestionInfo& question, MemoryBank& bank) override;
  const SinkKv& sinks() const override { return window_->sinks(); }
  int64_t next_position() const override { return next_position_; }
  // Under "fresh_frames": sampling, the frames fed (stream indices), frames held and their bytes,
  // and the seconds of vision and prefill.
  void add_record_fields(nlohmann::json& extra) const override;

 private:
  // Indices into held_ of the units the question is answered from, in time order.
  std::vector<size_t> chosen_units(double window_start) const;  // of those starting at or after window_start
  int64_t units_wanted() const;

  FreshFramesOptions options_;
  std::vector<int64_t> sink_ids_;
  int64_t frames_per_unit_ = 1;
  HeldFrames held_;
  std::unique_ptr<SlidingWindow> window_;  // the question's [sinks | frames], plain causal (never full)
  std::unique_ptr<MemoryBank> question_bank_;
  int64_t next_position_ = 0;
  std::vector<int64_t> fed_frames_;
  double vision_s_ = 0, prefill_s_ = 0;
};

}  // namespace svqa
