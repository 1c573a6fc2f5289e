#pragma once
// Mem-Stream's encoding (Agarwal et al. 2026, §4.1; ../shared/reference/memstream.md §3.3): ReKV's
// sliding window (strategies/kit/sliding_window.h) whose window is thinned by Adaptive Key
// Selection. When a frame-feature enters the window, at every layer the cosine of each of its
// tokens' keys with the same token of the previous frame-feature is taken, and only the k least
// similar tokens (K and V at the same indices) stay in the window for later frames to attend to.
// The frame-feature itself is encoded densely over [sinks | thinned window | itself], and its full
// K/V still go to the bank: AKS changes what the window attends to, not what is stored.
//
// Unspecified by the paper, options with the notes' defaults: k = round(N / 16) (≈16×); cosine over
// the concatenated kv heads of un-rotated (pre-RoPE) keys; the stream's first frame-feature (no
// predecessor) kept whole; the window spans n_local = 17,000 full tokens of the stream (ReKV's
// membership rule). A predecessor with another token count (never within a video): top-k by key norm.
// Modes for the paper's App. D.1 ablations: `dilated` (every s-th row and column of the token grid,
// A.2) and `uniform_frames` (every r-th frame-feature whole, the rest not at all, A.3).

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "engine/strategy.h"
#include "strategies/kit/sliding_window.h"

namespace svqa {

struct MemstreamAksOptions {
  int64_t n_local = 17000;
  std::string mode = "aks";
  double compression = 16;
  int64_t keep = 0;
  std::string similarity = "concat_heads";
  std::string keys = "pre_rope";
  std::string first = "dense";
  std::string positions = "window";
  std::string sink_entry = "migrate";
  static void declare(Schema<MemstreamAksOptions>& s) {
    declare_window_rules(s);
    s.field("n_local", &MemstreamAksOptions::n_local,
            "sliding window in tokens of the stream (full, not thinned, tokens); the paper's 17,000 "
            "(about 66 Qwen2.5-VL frame-features of 256 tokens)")
        .min(1)
        .max(kMaxTokensOption);
    s.field("mode", &MemstreamAksOptions::mode,
            "aks: the k tokens least similar to the previous frame-feature (the paper's); dilated: every s-th "
            "row and column of the token grid (App. D.1 A.2); uniform_frames: every r-th frame-feature whole (A.3)")
        .one_of({"aks", "dilated", "uniform_frames"});
    s.field("compression", &MemstreamAksOptions::compression,
            "r: the window keeps 1/r of each frame-feature's tokens (aks, dilated) or 1/r of the frame-features "
            "(uniform_frames); the paper's final ≈16×")
        .min(1)
        .max(1e6);
    s.field("keep", &MemstreamAksOptions::keep,
            "aks: tokens kept per window frame-feature, overriding compression; 0: max(1, round(N / compression))")
        .min(0)
        .max(kMaxTokensOption);
    s.field("similarity", &MemstreamAksOptions::similarity,
            "aks: concat_heads: cosine of the token's keys with all kv heads concatenated; per_kv_head: the mean "
            "over kv heads of each head's cosine (one token set for all heads either way)")
        .one_of({"concat_heads", "per_kv_head"});
    s.field("keys", &MemstreamAksOptions::keys,
            "aks: compare un-rotated keys (pre_rope: same-place tokens differ only in content) or keys rotated "
            "at their encode positions (post_rope)")
        .one_of({"pre_rope", "post_rope"});
    s.field("first", &MemstreamAksOptions::first,
            "the stream's first frame-feature, which has no predecessor: dense (kept whole) or dilated")
        .one_of({"dense", "dilated"});
  }
};

class MemstreamAks final : public EncodingStrategy {
 public:
  explicit MemstreamAks(MemstreamAksOptions options);

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override;
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override;
  const SinkKv& sinks() const override { return window_.sinks(); }
  int64_t next_position() const override { return next_position_; }
  // extra.memstream_aks.window_tokens: the window's tokens the next frame attends to (layer 0).
  void add_record_fields(nlohmann::json& extra) const override;

  // The token indices the last encoded frame-feature left in the window at `layer` (ascending;
  // undefined: all of them).
  const at::Tensor& last_kept(int64_t layer) const { return last_kept_.at(static_cast<size_t>(layer)); }
  const SlidingWindow& window() const { return window_; }

 private:
  at::Tensor select(Backbone& backbone, int64_t layer, const VisualUnit& unit, const LayerQkv& qkv);

  MemstreamAksOptions options_;
  SlidingWindow window_;
  int64_t next_position_ = 0;
  int64_t units_seen_ = 0;                   // frame-features of the stream so far
  int64_t unit_index_ = 0;                   // the frame-feature select() is choosing for
  std::vector<at::Tensor> previous_keys_;    // per layer: the last frame-feature's keys (as compared)
  std::vector<at::Tensor> last_kept_;        // per layer
};

// The k indices of the lowest values of `similarity` [N] (ties: the earlier index), ascending; all N when k >= N.
at::Tensor least_similar(const at::Tensor& similarity, int64_t k);

// Tokens on every `row_stride`-th row and `col_stride`-th column of a frame-feature's token grid,
// read from its positions [3, N] (rows 1, 2: h, w); 1-D positions: every row_stride*col_stride-th token.
at::Tensor dilated_tokens(const at::Tensor& positions, int64_t row_stride, int64_t col_stride);

}  // namespace svqa
