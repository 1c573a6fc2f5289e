#include "strategies/kit/layer_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>

namespace svqa {
namespace {

// Cumulative probability mass of one layer's candidates, largest first.
at::Tensor cumulative_mass(const at::Tensor& layer_scores) {
  const auto s = layer_scores.to(at::kCPU, at::kFloat).flatten();
  const int64_t n = s.size(0);
  if (n == 0) return s;
  at::Tensor p;
  const auto sd = n > 1 ? at::std(s) : at::Tensor();
  if (n == 1 || sd.item<float>() == 0.0f)
    p = at::full({n}, 1.0 / static_cast<double>(n), s.options());
  else
    p = at::softmax((s - at::mean(s)) / sd, 0);
  return std::get<0>(p.sort(0, /*descending=*/true)).cumsum(0);
}

}  // namespace

std::vector<int64_t> cdf_layer_counts(const std::vector<at::Tensor>& scores, int64_t target) {
  const auto layers = static_cast<int64_t>(scores.size());
  if (layers == 0) return {};
  std::vector<at::Tensor> mass;
  int64_t width = 0;
  for (const auto& s : scores) {
    mass.push_back(cumulative_mass(s));
    width = std::max(width, mass.back().size(0));
  }
  for (auto& m : mass)  // shorter layers padded with +inf, which no π reaches
    m = at::cat({m, at::full({width - m.size(0)}, std::numeric_limits<float>::infinity(), at::kFloat)});
  const auto sorted = at::stack(mass);
  const auto counts_at = [&](double pi) {
    const auto mid = at::full({layers, 1}, pi, at::kFloat);  // π compared in float32, as the reference code
    return at::searchsorted(sorted, mid, /*out_int32=*/false, /*right=*/false).clamp_min(1).view({-1});
  };
  double lo = 0, hi = 1, mid = 0;
  while (hi - lo > 1e-6) {
    mid = (lo + hi) / 2.0;
    const int64_t count = counts_at(mid).sum().item<int64_t>();
    if (std::llabs(count - target) < 5) break;
    if (count > target)
      hi = mid;
    else
      lo = mid;
  }
  const auto k = counts_at(mid).contiguous();
  return {k.data_ptr<int64_t>(), k.data_ptr<int64_t>() + layers};
}

std::vector<int64_t> rescale_sum_match(const std::vector<int64_t>& counts, double lo, double hi) {
  if (counts.empty()) return {};
  std::vector<double> a(counts.begin(), counts.end());
  const double sum = std::accumulate(a.begin(), a.end(), 0.0);
  const auto [min_it, max_it] = std::minmax_element(a.begin(), a.end());
  const double amin = *min_it, amax = *max_it;
  if (amin == amax) return counts;
  std::vector<double> scaled(a.size());
  for (size_t i = 0; i < a.size(); ++i) scaled[i] = (a[i] - amin) / (amax - amin) * (hi - lo) + lo;
  const double ratio = sum / std::accumulate(scaled.begin(), scaled.end(), 0.0);
  std::vector<double> mapped(a.size());
  for (size_t i = 0; i < a.size(); ++i)  // nearbyint: round half to even, as np.round
    mapped[i] = std::min(std::max(std::nearbyint(scaled[i] * ratio), lo), hi);
  auto diff = static_cast<int64_t>(std::nearbyint(sum - std::accumulate(mapped.begin(), mapped.end(), 0.0)));
  if (diff != 0) {
    std::vector<size_t> order(a.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      return diff > 0 ? mapped[x] < mapped[y] : mapped[x] > mapped[y];
    });
    for (const size_t i : order) {
      if ((diff > 0 && mapped[i] < hi) || (diff < 0 && mapped[i] > lo)) {
        mapped[i] += diff > 0 ? 1 : -1;
        diff += diff > 0 ? -1 : 1;
        if (diff == 0) break;
      }
    }
  }
  std::vector<int64_t> out;
  for (const double m : mapped) out.push_back(static_cast<int64_t>(m));
  return out;
}

}  // namespace svqa
