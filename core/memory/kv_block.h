#pragma once
// One unit of video memory: per-layer keys (un-rotated) and values of a span of the stream.

#include <ATen/ATen.h>

#include <algorithm>
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

// One layer's memory as one run of tokens (its blocks back to back, or what a rewrite keeps of them).
struct LayerMemory {
  at::Tensor keys, values;  // [n, kv_heads, d], un-rotated
  at::Tensor positions;     // [3, n]
};

// The first and last frame and time of a block: what a block replacing others must cover.
// `Span` and `Other`: anything with first_frame, last_frame, start_time, end_time (a KvBlock, a unit).
template <class Span, class Other>
void widen_span(Span& span, const Other& other) {
  span.first_frame = std::min(span.first_frame, other.first_frame);
  span.last_frame = std::max(span.last_frame, other.last_frame);
  span.start_time = std::min(span.start_time, other.start_time);
  span.end_time = std::max(span.end_time, other.end_time);
}

// A block of `granularity` at `positions` with room for `layers` layers and no K/V yet (every
// per-layer vector sized, its tensors undefined): an encoder fills it layer by layer (set_layer).
KvBlock empty_block(int64_t layers, Granularity granularity, at::Tensor positions);

// Stores `keys` and `values` [n, kv_heads, d] in `layer` of `block`, with their mean-key representative.
void set_layer(KvBlock& block, int64_t layer, at::Tensor keys, at::Tensor values);

// A block stored in `layer` only, holding `memory` (what a rewrite of that layer keeps).
KvBlock layer_only_block(int64_t layers, int64_t layer, LayerMemory memory, Granularity granularity);

// ReKV's representative vector: the mean over a block's tokens of its un-rotated keys
// [n, kv_heads, d], flattened, float32. The reference repeats each kv head for the query heads it
// serves and scores it against the question's mean query of every head; kept per kv head, the same
// score is the dot product with grouped_query() (7x less to hold for LLaVA-OV-0.5B's 14/2 heads).
at::Tensor mean_key_representative(const at::Tensor& keys);

// The question's mean query [heads, d] summed over each kv head's query heads, flattened to
// [kv_heads * d]: q̄ · repeat(k̄) = grouped_query(q̄) · k̄, the reference's score with k̄ per kv head.
at::Tensor grouped_query(const at::Tensor& mean_query, int64_t kv_heads);

}  // namespace svqa
