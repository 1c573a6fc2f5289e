#pragma once
// HERMES's choice of the tokens each layer keeps (Zhang et al. 2026, "HERMES: KV Cache as
// Hierarchical Memory for Efficient Streaming Video Understanding"; reference code
// haowei-freesky/HERMES, inference/llavaov_online_official.py `prune_kv_cache_by_attention`):
//   layers below int(L · short_ratio) are short-term (sensory) memory, scored by recency alone;
//   layers from int(L · (1 − long_ratio)) are long-term memory, scored by the pseudo queries'
//   attention alone and keeping one slot of their budget for a summary token; the layers between
//   mix the two, recency's weight falling linearly from 1 to 0.1 with depth.
//   A token's recency is exp(−k · d), d its distance from the newest token over (n − 1); attention
//   and recency are each min-max normalised. Scores are then smoothed from the deepest layer up
//   (cross-layer memory smoothing): s_i ← (1 − γ_i) s_i + γ_i s_{i+1}, γ 0.4 / 0.3 / 0.1 for
//   long / mid / short layers, and each layer keeps its top min(budget, n) (long: budget − 1).
// Computed in float32 as the reference does.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace svqa {

enum class MemoryTier { Short, Mid, Long };
const char* memory_tier_name(MemoryTier tier);

struct LayerRule {
  MemoryTier tier = MemoryTier::Short;
  double recency_alpha = 1;  // weight of recency in the score (1 − it: attention)
  double decay = 20;         // k of the recency weight exp(−k · d)
  double smoothing = 0.1;    // γ: weight of the deeper layer's smoothed score
};

// The rule of every layer of `layers` (the reference's thresholds: int() of the products).
std::vector<LayerRule> layer_rules(int64_t layers, double short_ratio, double long_ratio);

// attention[l]: layer l's attention [n] (float32) from its tier's pseudo query to its n memory
// tokens (every layer the same n). Returns per layer the indices kept, ascending (int64).
std::vector<at::Tensor> hermes_keep(const std::vector<at::Tensor>& attention, const std::vector<LayerRule>& rules,
                                    int64_t budget);

}  // namespace svqa
