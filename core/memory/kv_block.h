#pragma once
// One unit of video memory: per-layer keys (un-rotated) and values of a span of the stream.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace svqa {

enum class Granularity { Patch, Frame, Segment, Summary };
inline constexpr int kGranularities = 4;
const char* granularity_name(Granularity g);

struct KvBlock {
  int64_t id = -1;  // set by MemoryBank::add, dense from 0
  Granularity granularity = Granularity::Frame;
  int64_t first_frame = 0, last_frame = 0;  // sampled-frame indices covered, inclusive
  double start_time = 0, end_time = 0;      // seconds, of the first and last frame
  // Positions the tokens were encoded at, [3, n] (t, h, w; equal rows for 1-D RoPE). The
  // `original` position policy reuses them; `contiguous` keeps only their shape relative to the minimum.
  at::Tensor positions;
  // Per layer [n, kv_heads, head_dim]; an undefined tensor where the block is absent from a layer.
  std::vector<at::Tensor> keys, values;
  // Per layer [kv_heads * head_dim] float32 (ReKV: mean un-rotated key per kv head), or undefined.
  std::vector<at::Tensor> representatives;

  int64_t num_tokens() const { return positions.defined() ? positions.size(1) : 0; }
  bool in_layer(int64_t layer) const {
    return layer < static_cast<int64_t>(keys.size()) && keys[static_cast<size_t>(layer)].defined();
  }
  // Bytes of K and V over all layers.
  int64_t kv_bytes() const;
};

// ReKV's representative vector: the mean over a block's tokens of its un-rotated keys
// [n, kv_heads, d], flattened, float32. The reference repeats each kv head for the query heads it
// serves and scores it against the question's mean query of every head; kept per kv head, the same
// score is the dot product with grouped_query() (7x less to hold for LLaVA-OV-0.5B's 14/2 heads).
at::Tensor mean_key_representative(const at::Tensor& keys);

// The question's mean query [heads, d] summed over each kv head's query heads, flattened to
// [kv_heads * d]: q̄ · repeat(k̄) = grouped_query(q̄) · k̄, the reference's score with k̄ per kv head.
at::Tensor grouped_query(const at::Tensor& mean_query, int64_t kv_heads);

}  // namespace svqa
