#pragma once
// ReKV encoding (Di et al., ICLR 2025; reference code Becomebright/ReKV): frames are prefilled
// one frame block at a time with causal sliding-window attention over the last `n_local` tokens
// plus the system-prompt sinks (strategies/kit/sliding_window.h); every frame's un-rotated
// K/V goes to the bank as one block, with the mean key (per kv head: kv_block.h) as its
// representative vector per layer.

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "engine/strategy.h"
#include "strategies/kit/sliding_window.h"

namespace svqa {

struct RekvOptions {
  int64_t n_local = 15000;
  std::string positions = "window";
  std::string sink_entry = "migrate";
  bool answer_fallback = true;
  static void declare(Schema<RekvOptions>& s) {
    s.field("n_local", &RekvOptions::n_local,
            "local attention window in tokens; ReKV's default 15000 (about 76 LLaVA-OV frames)")
        .min(1)
        .max(kMaxTokensOption);
    declare_window_rules(s);
    s.field("answer_fallback", &RekvOptions::answer_fallback,
            "past n_local context tokens the answer attends to the sinks + a sliding window of n_local, as "
            "ReKV's rekv_attention.py; false: plain causal attention however long");
  }
};

class RekvSlidingWindow final : public EncodingStrategy {
 public:
  explicit RekvSlidingWindow(RekvOptions options) : window_(options.n_local, window_rules(options)) {}

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
