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

// An encoding strategy behind a reducer: every call goes to `inner`, encode() with reduced units. Its
// traits are the registration's (StreamingTOM declares ReKV's window's, reading visual tokens).
class ReducingEncoder final : public EncoderWrapper {
 public:
  ReducingEncoder(std::unique_ptr<VisualTokenReducer> reducer, std::unique_ptr<EncodingStrategy> inner)
      : EncoderWrapper(std::move(inner)), reducer_(std::move(reducer)) {}

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override;
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override;

  VisualTokenReducer& reducer() { return *reducer_; }

 private:
  std::unique_ptr<VisualTokenReducer> reducer_;
};

}  // namespace svqa
