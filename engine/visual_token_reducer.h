#pragma once
// The pre-LLM visual-token hook: a reducer thins (or merges) each unit's visual tokens after the
// vision tower and before the LLM sees them, and ReducingEncoder puts one in front of any encoding
// strategy, which then encodes the reduced units as it would the originals (StreamingTOM's CTR in
// front of a sliding-window prefill: 196 tokens a frame become 50).
//
// Positions follow the kept tokens: with 1-D RoPE (LLaVA-OV) the reduced units are renumbered back
// to back from the first unit's first position, as a shorter sequence would be laid out; with
// mRoPE each kept token keeps its (t, h, w) position.

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "engine/strategy.h"

namespace svqa {

// What a reducer keeps of one unit.
struct ReducedTokens {
  at::Tensor rows;    // int64 [k]: the source token each kept one stands for (its position, its DeepStack row), ascending
  at::Tensor tokens;  // [k, hidden]: the kept tokens' embeddings (merged ones may differ from the source rows)
};

class VisualTokenReducer {
 public:
  virtual ~VisualTokenReducer() = default;
  // A new stream: forget the previous one's frames.
  virtual void begin_stream() {}
  // Called for every unit in stream order, once.
  virtual ReducedTokens reduce(const VisualUnit& unit) = 0;
};

// `units` with each one's tokens reduced; 1-D positions renumbered (mrope false) from the first
// unit's first position, else kept per kept token. Units without tokens pass through.
std::vector<VisualUnit> reduce_units(VisualTokenReducer& reducer, const std::vector<VisualUnit>& units, bool mrope);

// An encoding strategy behind a reducer: every call goes to `inner`, encode() with reduced units.
class ReducingEncoder : public EncodingStrategy {
 public:
  ReducingEncoder(std::unique_ptr<VisualTokenReducer> reducer, std::unique_ptr<EncodingStrategy> inner)
      : reducer_(std::move(reducer)), inner_(std::move(inner)) {}

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override;
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override;
  const SinkKv& sinks() const override { return inner_->sinks(); }
  int64_t next_position() const override { return inner_->next_position(); }
  void before_question(Backbone& backbone, const QuestionInfo& question, MemoryBank& bank) override {
    inner_->before_question(backbone, question, bank);
  }
  bool needs_visual_tokens() const override { return true; }  // the reducer reads them
  const MemoryBank* question_bank() const override { return inner_->question_bank(); }
  void add_record_fields(nlohmann::json& extra) const override { inner_->add_record_fields(extra); }
  bool memory_snapshots() const override { return inner_->memory_snapshots(); }
  PositionPolicy position_policy() const override { return inner_->position_policy(); }
  bool blocks_tile_stream() const override { return inner_->blocks_tile_stream(); }
  int64_t answer_window() const override { return inner_->answer_window(); }

  const EncodingStrategy& inner() const { return *inner_; }
  VisualTokenReducer& reducer() { return *reducer_; }

 private:
  std::unique_ptr<VisualTokenReducer> reducer_;
  std::unique_ptr<EncodingStrategy> inner_;
};

}  // namespace svqa
