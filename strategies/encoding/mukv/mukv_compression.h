#pragma once
// MuKV's dual-signal compression (DCP, paper §3.3; reference code IMBALDY/MuKV,
// model/mukv_dualsignal_compression.py): which tokens of a freshly prefilled block to keep, from
// the attention they received in a chosen layer and the high-frequency content of their keys.
// Pure functions of tensors, so a test can hold them against a transcription of the reference.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace svqa {

// Whose attention scores the tokens: the last layer (the paper's choice), the one before, the
// middle one (num_layers / 2), or the last five weighted 0.1, 0.15, 0.2, 0.25, 0.3 oldest to newest.
enum class AttentionLayers { Last, SecondLast, Middle, Last5 };
AttentionLayers attention_layers_from_name(const std::string& name);  // last | second_last | middle | last_5
// (layer, weight) pairs, oldest first, for a model of `num_layers` layers.
std::vector<std::pair<int64_t, double>> attention_layer_weights(AttentionLayers which, int64_t num_layers);

// `fft`: the reference scripts' high-pass (inverse FFT of the upper half of the spectrum, per-token
// magnitude); `diff`: the norm of each key's difference to the previous one.
enum class FrequencyScore { Fft, Diff };
FrequencyScore frequency_score_from_name(const std::string& name);  // fft | diff

// `fused`: α·attention + (1 − α)·frequency, both min-max normalised (paper Eq. 4); or one signal alone.
enum class Importance { Fused, Attention, Frequency };
Importance importance_from_name(const std::string& name);  // fused | attention | frequency

struct DcpSettings {
  Importance importance = Importance::Fused;
  FrequencyScore frequency = FrequencyScore::Fft;
  double alpha = 0.7;       // weight of the attention signal in `fused`
  double keep_ratio = 1.0;  // ρ: ⌊ρ·N⌋ tokens are kept (at least one)
  bool dedup = false;       // drop near-duplicate candidates (cosine of their keys above the threshold)
  double dedup_threshold = 0.9;
};

// (x − min) / (max − min + 1e-8), as the reference code normalises.
at::Tensor min_max(const at::Tensor& x);

// Per key column of the block: Σ_l w_l · Σ_queries mean_heads(probs_l), with probs_l [heads, N,
// n_init + N] (float32, causal) and the n_init sink columns dropped → [N], not normalised.
at::Tensor attention_importance(const std::vector<at::Tensor>& probs, const std::vector<double>& weights,
                                int64_t n_init);

// Of a block's last-layer keys [N, kv_heads, d] (rotated at their encode positions, as the
// reference keeps them), averaged over kv heads, min-max normalised → [N] float32.
at::Tensor frequency_importance(const at::Tensor& keys, FrequencyScore method);

// The score tokens are ranked by: `attention` is the raw attention importance, `frequency` the
// normalised frequency importance, `fused` the α-weighted sum of both normalised.
at::Tensor token_importance(const at::Tensor& attention, const at::Tensor& keys, const DcpSettings& settings);

// κ = max(1, ⌊ρ·N⌋) for a block of N tokens.
int64_t kept_count(int64_t n, double keep_ratio);

// The κ highest-scored tokens, indices ascending (int64, CPU). With dedup: the top ⌊1.2·κ⌋
// candidates, greedily dropping the lower-scored one of any pair whose mean-over-heads keys have a
// cosine above the threshold, then the top κ of those left (possibly fewer), as the reference does.
at::Tensor select_tokens(const at::Tensor& importance, const at::Tensor& keys, const DcpSettings& settings);

}  // namespace svqa
