#include "strategies/encoding/mukv/mukv_compression.h"

#include <algorithm>
#include <stdexcept>

namespace svqa {
namespace {

// Last-layer keys [N, kv_heads, d] averaged over kv heads, float32 → [N, d].
at::Tensor head_mean(const at::Tensor& keys) {
  if (keys.dim() != 3) throw std::invalid_argument("mukv compression: keys must be [N, kv_heads, d]");
  return keys.to(at::kFloat).mean(1);
}

}  // namespace

AttentionLayers attention_layers_from_name(const std::string& name) {
  if (name == "last") return AttentionLayers::Last;
  if (name == "second_last") return AttentionLayers::SecondLast;
  if (name == "middle") return AttentionLayers::Middle;
  if (name == "last_5") return AttentionLayers::Last5;
  throw std::invalid_argument("unknown attention layer choice '" + name + "' (expected last, second_last, middle or last_5)");
}

std::vector<std::pair<int64_t, double>> attention_layer_weights(AttentionLayers which, int64_t num_layers) {
  switch (which) {
    case AttentionLayers::Last: return {{num_layers - 1, 1.0}};
    case AttentionLayers::SecondLast: return {{std::max<int64_t>(0, num_layers - 2), 1.0}};
    case AttentionLayers::Middle: return {{num_layers / 2, 1.0}};
    case AttentionLayers::Last5: {
      // The reference's weights, the newest layer last; fewer layers take the newest weights.
      const std::vector<double> weights{0.1, 0.15, 0.2, 0.25, 0.3};
      const int64_t n = std::min<int64_t>(5, num_layers);
      std::vector<std::pair<int64_t, double>> out;
      for (int64_t i = 0; i < n; ++i) out.emplace_back(num_layers - n + i, weights[static_cast<size_t>(5 - n + i)]);
      return out;
    }
  }
  return {};
}

FrequencyScore frequency_score_from_name(const std::string& name) {
  if (name == "fft") return FrequencyScore::Fft;
  if (name == "diff") return FrequencyScore::Diff;
  throw std::invalid_argument("unknown frequency score '" + name + "' (expected fft or diff)");
}

Importance importance_from_name(const std::string& name) {
  if (name == "fused") return Importance::Fused;
  if (name == "attention") return Importance::Attention;
  if (name == "frequency") return Importance::Frequency;
  throw std::invalid_argument("unknown importance '" + name + "' (expected fused, attention or frequency)");
}

at::Tensor min_max(const at::Tensor& x) { return (x - x.min()) / (x.max() - x.min() + 1e-8); }

at::Tensor attention_importance(const std::vector<at::Tensor>& probs, const std::vector<double>& weights,
                                int64_t n_init) {
  if (probs.empty() || probs.size() != weights.size())
    throw std::invalid_argument("mukv compression: need one weight per attention layer, at least one layer");
  at::Tensor total;
  if (probs.size() == 1) {
    total = probs[0].mean(0).sum(0);
  } else {
    total = at::zeros({probs[0].size(-1)}, probs[0].options());
    for (size_t i = 0; i < probs.size(); ++i) total += probs[i].mean(0).sum(0) * weights[i];
  }
  return total.narrow(0, n_init, total.size(0) - n_init);
}

at::Tensor frequency_importance(const at::Tensor& keys, FrequencyScore method) {
  const at::Tensor k = head_mean(keys);  // [N, d]
  const int64_t n = k.size(0);
  at::Tensor score;
  if (method == FrequencyScore::Diff) {
    score = at::linalg_vector_norm(at::diff(k, 1, 0, k.narrow(0, 0, 1)), 2, {-1});
  } else {
    // Per channel, keep the upper half of the spectrum over tokens (DC excluded), back to tokens.
    at::Tensor spectrum = at::fft_rfft(k.t(), std::nullopt, -1);  // [d, N/2 + 1]
    const int64_t bins = spectrum.size(-1), start = std::max<int64_t>(1, bins / 2);
    spectrum.narrow(-1, 0, start).zero_();
    score = at::fft_irfft(spectrum, n, -1).abs().mean(0);
  }
  return min_max(score);
}

at::Tensor token_importance(const at::Tensor& attention, const at::Tensor& keys, const DcpSettings& settings) {
  if (settings.importance == Importance::Attention) return attention;
  const at::Tensor frequency = frequency_importance(keys, settings.frequency);
  if (settings.importance == Importance::Frequency) return frequency;
  return min_max(attention) * settings.alpha + frequency * (1.0 - settings.alpha);
}

int64_t kept_count(int64_t n, double keep_ratio) {
  return std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(n) * keep_ratio));
}

at::Tensor select_tokens(const at::Tensor& importance, const at::Tensor& keys, const DcpSettings& settings) {
  const at::Tensor score = importance.to(at::kCPU);
  const int64_t n = score.size(0), kappa = std::min(n, kept_count(n, settings.keep_ratio));
  const int64_t candidates = std::min(static_cast<int64_t>(static_cast<double>(kappa) * 1.2), n);
  at::Tensor chosen = std::get<1>(score.topk(candidates));
  if (!settings.dedup || candidates <= kappa) {
    chosen = chosen.narrow(0, 0, kappa);
  } else {
    at::Tensor v = head_mean(keys).to(at::kCPU).index_select(0, chosen);
    v = v / v.norm(2, {1}, true);
    const at::Tensor sim = at::mm(v, v.t()).contiguous();
    const float* s = sim.data_ptr<float>();
    const auto idx = chosen.accessor<int64_t, 1>();
    const auto imp = score.accessor<float, 1>();
    std::vector<bool> keep(static_cast<size_t>(candidates), true);
    const auto threshold = static_cast<float>(settings.dedup_threshold);
    for (int64_t i = 0; i < candidates; ++i) {
      if (!keep[static_cast<size_t>(i)]) continue;
      for (int64_t j = i + 1; j < candidates; ++j) {
        if (!(s[i * candidates + j] > threshold)) continue;
        if (imp[idx[i]] < imp[idx[j]]) {  // candidates are sorted, so in practice j is dropped
          keep[static_cast<size_t>(i)] = false;
          break;
        }
        keep[static_cast<size_t>(j)] = false;
      }
    }
    std::vector<int64_t> left;
    for (int64_t i = 0; i < candidates; ++i)
      if (keep[static_cast<size_t>(i)]) left.push_back(idx[i]);
    chosen = at::tensor(left, at::kLong);
    if (chosen.size(0) > kappa) chosen = chosen.index_select(0, std::get<1>(score.index_select(0, chosen).topk(kappa)));
  }
  return std::get<0>(chosen.sort());
}

}  // namespace svqa
