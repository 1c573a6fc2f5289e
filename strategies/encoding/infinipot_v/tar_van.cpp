#include "strategies/encoding/infinipot_v/tar_van.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace svqa {
namespace {

at::Tensor unit_rows(const at::Tensor& x) { return x / (x.norm(2, {-1}, true) + 1e-9); }

// TaR: the recent frames' tokens and the older tokens least like the same place in them, ascending.
at::Tensor temporal_redundancy(const at::Tensor& keys, const TarVanParams& p, int64_t budget) {
  const int64_t n = keys.size(0), t = p.tokens_per_frame, frames = n / t;
  const int64_t recent = static_cast<int64_t>(static_cast<double>(frames) * p.query_ratio) * t;
  if (recent < t || budget < recent)
    throw std::invalid_argument("infinipot_v: TaR needs at least one recent frame and a budget that holds them (" +
                                std::to_string(recent) + " recent tokens, budget " + std::to_string(budget) + ")");
  const auto k = keys.to(at::kFloat);
  const auto query = unit_rows(k.narrow(0, n - recent, recent)).view({recent / t, t, k.size(1), k.size(2)});
  const auto older = unit_rows(k.narrow(0, 0, n - recent)).view({(n - recent) / t, t, k.size(1), k.size(2)});
  // [older frames, t, kv heads]: minus the mean cosine with the same index in each recent frame.
  const auto score = -at::einsum("qthd,kthd->qkth", {query, older}).mean(0);
  const auto per_token = score.reshape({n - recent, k.size(1)}).mean(1);
  const auto chosen = std::get<1>(per_token.topk(budget - recent));
  return std::get<0>(at::cat({chosen, at::arange(n - recent, n, at::kLong)}).sort());
}

// VaN: each token's value norm, pooled as `p` says, averaged over kv heads ([N] float32).
at::Tensor value_norms(const at::Tensor& values, const TarVanParams& p) {
  auto norms = values.to(at::kFloat).norm(2, {-1}).transpose(0, 1).contiguous();  // [kv heads, N]
  const int64_t heads = norms.size(0), n = norms.size(1), pad = p.pool_size / 2;
  if (p.pool_dims == 2) {
    const auto grid = norms.view({heads, n / p.tokens_per_frame, p.grid_height, -1});
    norms = at::avg_pool2d(grid, {p.pool_size, p.pool_size}, {1, 1}, {pad, pad}, false, true).reshape({heads, n});
  } else if (p.pool_dims == 1) {
    norms = at::avg_pool1d(norms.unsqueeze(0), {p.pool_size}, {1}, {pad}, false, true).squeeze(0);
  }
  return norms.mean(0);
}

}  // namespace

void adaptive_pooling(int64_t layer, int64_t layers, TarVanParams& params) {
  static constexpr int64_t kDims[] = {2, 2, 1, -1}, kSizes[] = {7, 5, 3, 3};
  const int64_t group = std::min<int64_t>(3, layer / std::max<int64_t>(1, layers / 4));
  params.pool_dims = kDims[group];
  params.pool_size = kSizes[group];
}

at::Tensor tar_van_keep(const at::Tensor& keys, const at::Tensor& values, const TarVanParams& p) {
  const int64_t n = keys.size(0), t = p.tokens_per_frame, keep = p.keep_frames * t;
  if (t <= 0 || n % t != 0 || n <= keep)
    throw std::invalid_argument("infinipot_v: " + std::to_string(n) + " cached tokens are not more than " +
                                std::to_string(p.keep_frames) + " whole frames of " + std::to_string(t));
  // The reference's round() of (1 − tar_ratio) · frames · tokens: Python rounds half to even, as nearbyint.
  const auto van_budget = static_cast<int64_t>(std::nearbyint((1 - p.tar_ratio) * static_cast<double>(p.keep_frames) *
                                                              static_cast<double>(t)));
  auto score = value_norms(values, p);
  if (p.tar_ratio > 0) score.index_fill_(0, temporal_redundancy(keys, p, keep - van_budget), score.max().item<float>() + 1);
  return std::get<0>(std::get<1>(score.topk(keep)).sort());
}

}  // namespace svqa
