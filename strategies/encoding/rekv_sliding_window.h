#pragma once
// ReKV encoding (Di et al., ICLR 2025; reference code Becomebright/ReKV): frames are prefilled
// one frame block at a time with causal sliding-window attention over the last `n_local` tokens
// plus the system-prompt sinks; every frame's un-rotated K/V goes to the bank as one block, with
// the mean key (kv heads expanded to query heads) as its representative vector per layer.

#include <cstdint>
#include <vector>

#include "core/nn/rope.h"
#include "core/config/schema.h"
#include "core/engine/strategy.h"

namespace svqa {

struct RekvOptions {
  int64_t n_local = 15000;
  static void declare(Schema<RekvOptions>& s) {
    s.field("n_local", &RekvOptions::n_local,
            "local attention window in tokens; ReKV's default 15000 (about 76 LLaVA-OV frames)")
        .min(1);
  }
};

class RekvSlidingWindow final : public EncodingStrategy {
 public:
  explicit RekvSlidingWindow(RekvOptions options) : options_(options) {}

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override;
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override;
  const SinkKv& sinks() const override { return sinks_; }
  int64_t next_position() const override { return next_position_; }

 private:
  void encode_unit(Backbone& backbone, const VisualUnit& unit, MemoryBank& bank);

  RekvOptions options_;
  SinkKv sinks_;
  // The local window, un-rotated, with the positions its tokens were encoded at. Until the stream
  // first outgrows n_local it still starts with the sink tokens (as in the reference code, where
  // nothing is offloaded before then), so a stream that fits is plain causal attention.
  std::vector<at::Tensor> window_k_, window_v_;
  at::Tensor window_positions_;
  bool sinks_separate_ = false;
  int64_t next_position_ = 0;
};

}  // namespace svqa
