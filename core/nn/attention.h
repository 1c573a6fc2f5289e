#pragma once
// Attention over past keys under one softmax, with grouped-query heads and the masks strategies need.
//
// Without probabilities, attention runs as fused calls (CPU: the flash kernel; CUDA: FlashAttention
// for 16-bit types, memory-efficient attention for float32; no [T, S] score matrix): the keys every
// query sees in one call without a mask, the queries' own block in a causal one, and the results
// merged by their log-sum-exp. With probabilities, the eager path (float32 softmax, as HF's eager
// attention).

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace svqa {

// Which keys each query sees. Keys are [past..., the T queries' own keys] in order, so query i sits
// at key index S - T + i (bottom-right aligned, as a KV cache is).
struct AttentionMask {
  bool causal = true;        // no key after the query's own
  int64_t window = 0;        // > 0: only the last `window` keys up to the query's own...
  int64_t always_visible = 0;  // ...except the first `always_visible` keys (attention sinks)
};

struct AttentionResult {
  at::Tensor out;    // [T, heads * head_dim]
  at::Tensor probs;  // [heads, T, S] float32, only when asked for
};

// q [T, heads, d] and k, v [S, kv_heads, d], both already rotated; heads % kv_heads == 0
// (kv head j serves query heads j*g .. j*g+g-1, as HF's repeat_kv).
AttentionResult attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const AttentionMask& mask,
                       bool want_probs = false);

// The same with an explicit visibility [T, S] bool (true where query i may see key j), e.g. a window
// whose keys are not contiguous in the stream.
AttentionResult attend_masked(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& visible,
                              bool want_probs = false);

// The same over several key/value segments (e.g. sinks, retrieved blocks, local window) as one sequence.
AttentionResult attend(const at::Tensor& q, const std::vector<at::Tensor>& ks, const std::vector<at::Tensor>& vs,
                       const AttentionMask& mask, bool want_probs = false);

// One part of a joint attention: queries rotated for this part's keys, and what each sees.
struct AttentionSegment {
  at::Tensor q;        // [T, heads, d] (same T and heads in every segment)
  at::Tensor k, v;     // [S_i, kv_heads, d]
  at::Tensor visible;  // [T, S_i] bool, or undefined for all visible
  // Instead of `visible`: the same mask as `attend` takes, over this segment's keys (queries at its
  // last T keys). Faster: the keys every query sees go to fused calls without a mask.
  std::optional<AttentionMask> mask;
};

// Softmax over all segments' keys at once, each scored with its own queries: e.g. ReKV's local
// window at true relative positions plus sinks at a fixed distance. Output [T, heads * d].
at::Tensor attend_joint(const std::vector<AttentionSegment>& segments);

// [T, S] bool, true where query i may see key j.
at::Tensor attention_visibility(int64_t queries, int64_t keys, const AttentionMask& mask, at::Device device);

}  // namespace svqa
