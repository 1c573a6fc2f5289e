#include "strategies/encoding/hermes/hierarchy.h"

#include <algorithm>
#include <stdexcept>

namespace svqa {
namespace {

at::Tensor min_max(const at::Tensor& x) { return (x - x.min()) / (x.max() - x.min() + 1e-6); }

// The layer's own score: normalised attention and recency mixed by its rule.
at::Tensor raw_score(const at::Tensor& attention, const LayerRule& rule) {
  const int64_t n = attention.size(0);
  const auto positions = at::arange(n, at::kFloat);
  const auto distance = (static_cast<double>(n - 1) - positions) / static_cast<double>(std::max<int64_t>(n - 1, 1));
  const auto recency = at::exp(distance * (-rule.decay));
  return min_max(attention) * (1 - rule.recency_alpha) + min_max(recency) * rule.recency_alpha;
}

// The deeper layer's score at this layer's length (linear, align_corners false, as F.interpolate).
at::Tensor resized(const at::Tensor& score, int64_t n) {
  if (score.size(0) == n) return score;
  return at::upsample_linear1d(score.view({1, 1, -1}), {n}, false).view(-1);
}

}  // namespace

const char* memory_tier_name(MemoryTier tier) {
  switch (tier) {
    case MemoryTier::Short: return "short";
    case MemoryTier::Mid: return "mid";
    case MemoryTier::Long: return "long";
  }
  return "?";
}

std::vector<LayerRule> layer_rules(int64_t layers, double short_ratio, double long_ratio) {
  const auto short_end = static_cast<int64_t>(static_cast<double>(layers) * short_ratio);
  const auto long_start = static_cast<int64_t>(static_cast<double>(layers) * (1 - long_ratio));
  std::vector<LayerRule> rules;
  for (int64_t l = 0; l < layers; ++l) {
    if (l < short_end) {
      rules.push_back({MemoryTier::Short, 1.0, 20.0, 0.1});
    } else if (l >= long_start) {
      rules.push_back({MemoryTier::Long, 0.0, 0.0, 0.4});
    } else {
      const double progress = static_cast<double>(l - short_end) / static_cast<double>(long_start - short_end);
      rules.push_back({MemoryTier::Mid, 1.0 - 0.9 * progress, 20 - 19.5 * progress, 0.3});
    }
  }
  return rules;
}

std::vector<at::Tensor> hermes_keep(const std::vector<at::Tensor>& attention, const std::vector<LayerRule>& rules,
                                    int64_t budget) {
  if (attention.size() != rules.size() || attention.empty())
    throw std::invalid_argument("hermes_keep: one attention vector per layer rule is needed");
  std::vector<at::Tensor> score;
  for (size_t l = 0; l < rules.size(); ++l) score.push_back(raw_score(attention[l].to(at::kFloat), rules[l]));
  for (size_t i = score.size() - 1; i-- > 0;) {
    const double g = rules[i].smoothing;
    score[i] = score[i] * (1 - g) + resized(score[i + 1], score[i].size(0)) * g;
  }
  std::vector<at::Tensor> kept;
  for (size_t l = 0; l < rules.size(); ++l) {
    const int64_t layer_budget = rules[l].tier == MemoryTier::Long ? std::max<int64_t>(0, budget - 1) : budget;
    const auto top = std::get<1>(at::topk(score[l], std::min(layer_budget, score[l].size(0)), -1, true, false));
    kept.push_back(std::get<0>(top.sort()));
  }
  return kept;
}

}  // namespace svqa
