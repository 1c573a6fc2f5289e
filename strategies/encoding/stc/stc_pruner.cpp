#include "strategies/encoding/stc/stc_pruner.h"

#include <algorithm>

namespace svqa {
namespace {

// scoring.py gaussian_similarity: Σ_α exp(−‖x − target‖² / 2α), α = 2⁻³ … 2¹, summed in that order.
at::Tensor gaussian_similarity(const at::Tensor& x, const at::Tensor& target) {
  const at::Tensor distance = (x - target).pow(2).sum(-1);
  at::Tensor sum = at::zeros_like(distance);
  for (const double alpha : {0.125, 0.25, 0.5, 1.0, 2.0}) sum = sum + at::exp(-distance / (2 * alpha));
  return sum;
}

// F.normalize(x, dim=-1): x / max(‖x‖, 1e-12).
at::Tensor normalized(const at::Tensor& x) { return x / x.norm(2, -1, /*keepdim=*/true).clamp_min(1e-12).expand_as(x); }

}  // namespace

at::Tensor stc_kept_rows(const at::Tensor& tokens, std::vector<at::Tensor>& frame_means, const StcPrunerSettings& settings) {
  const at::Tensor variance = tokens.var(0, /*unbiased=*/false);
  const int64_t channels = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(variance.size(0)) * settings.channel_keep_ratio));
  const at::Tensor kept_channels = std::get<1>(variance.topk(channels, 0, /*largest=*/false));
  const at::Tensor x = tokens.index_select(1, kept_channels).unsqueeze(0);  // [1, P, c]
  frame_means.push_back(x.mean({0, 1}, /*keepdim=*/true));                   // [1, 1, c]
  const at::Tensor temporal = at::cat(frame_means, 0).mean(0);               // [1, c]
  const at::Tensor unit = normalized(x);
  const at::Tensor scores = gaussian_similarity(unit, normalized(temporal).view({1, 1, -1})) +
                            gaussian_similarity(unit, unit.mean(1, /*keepdim=*/true));
  const int64_t budget = std::max<int64_t>(1, std::min(settings.tokens_per_frame, tokens.size(0)));
  return std::get<0>(std::get<1>(scores[0].topk(budget, 0, /*largest=*/false)).sort());
}

ReducedTokens StcPruner::reduce(const VisualUnit& unit) {
  const at::Tensor rows = stc_kept_rows(unit.tokens, frame_means_, settings_);
  return {rows, unit.tokens.index_select(0, rows.to(unit.tokens.device()))};
}

}  // namespace svqa
