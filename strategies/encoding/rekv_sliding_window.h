#pragma once
// ReKV encoding (Di et al., ICLR 2025; reference code Becomebright/ReKV): frames are prefilled
// one frame block at a time with causal sliding-window attention over the last `n_local` tokens
// plus the system-prompt sinks (strategies/encoding/sliding_window.h); every frame's un-rotated
// K/V goes to the bank as one block, with the mean key (kv heads expanded to query heads) as its
// representative vector per layer.

#include <cstdint>
#include <vector>

#include "core/config/schema.h"
#include "core/engine/strategy.h"
#include "strategies/encoding/sliding_window.h"

namespace svqa {

struct RekvOptions {
  int64_t n_local = 15000;
  static void declare(Schema<RekvOptions>& s) {
    s.field("n_local", &RekvOptions::n_local,
            "local attention window in tokens; ReKV's default 15000 (about 76 LLaVA-OV frames)")
        .min(1)
        .max(kMaxTokensOption);
  }
};

// ReKV's bank block of one encoded unit: its full un-rotated K/V per layer, span, encode positions
// and the mean-key representative (kv heads expanded to `heads` query heads).
KvBlock rekv_unit_block(const VisualUnit& unit, WindowOutput output, int64_t heads);

class RekvSlidingWindow final : public EncodingStrategy {
 public:
  explicit RekvSlidingWindow(RekvOptions options) : window_(options.n_local) {}

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override;
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override;
  const SinkKv& sinks() const override { return window_.sinks(); }
  int64_t next_position() const override { return next_position_; }
  // extra.rekv_sliding_window.window_tokens: the window's tokens the next frame attends to (layer 0).
  void add_record_fields(nlohmann::json& extra) const override;
  const SlidingWindow& window() const { return window_; }

 private:
  SlidingWindow window_;
  int64_t next_position_ = 0;
};

}  // namespace svqa
