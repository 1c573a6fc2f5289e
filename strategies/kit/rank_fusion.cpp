#include "strategies/kit/rank_fusion.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace svqa {
namespace {

// Rows in descending score order, equal scores by row; NaN rows left out.
std::vector<int64_t> order(const at::Tensor& scores) {
  if (scores.scalar_type() != at::kDouble || scores.dim() != 1 || !scores.device().is_cpu())
    throw std::invalid_argument("rank fusion: expected float64 [n] CPU scores");
  const auto s = scores.contiguous();
  const double* x = s.data_ptr<double>();
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < s.size(0); ++i)
    if (!std::isnan(x[i])) rows.push_back(i);
  std::stable_sort(rows.begin(), rows.end(), [x](int64_t a, int64_t b) { return x[a] > x[b]; });
  return rows;
}

}  // namespace

std::vector<int64_t> descending_ranks(const at::Tensor& scores) {
  std::vector<int64_t> rank(static_cast<size_t>(scores.size(0)), 0);
  const auto rows = order(scores);
  for (size_t i = 0; i < rows.size(); ++i) rank[static_cast<size_t>(rows[i])] = static_cast<int64_t>(i) + 1;
  return rank;
}

at::Tensor reciprocal_rank_fusion(const std::vector<at::Tensor>& rankings, const std::vector<double>& weights,
                                  double k) {
  if (rankings.empty() || rankings.size() != weights.size())
    throw std::invalid_argument("rank fusion: " + std::to_string(rankings.size()) + " rankings and " +
                                std::to_string(weights.size()) + " weights (expected one weight per ranking)");
  const int64_t n = rankings[0].size(0);
  auto fused = at::zeros({n}, at::kDouble);
  double* out = fused.data_ptr<double>();
  for (size_t r = 0; r < rankings.size(); ++r) {
    if (rankings[r].size(0) != n) throw std::invalid_argument("rank fusion: rankings of different lengths");
    const auto rank = descending_ranks(rankings[r]);
    for (int64_t i = 0; i < n; ++i)
      if (rank[static_cast<size_t>(i)] > 0) out[i] += weights[r] / (k + static_cast<double>(rank[static_cast<size_t>(i)]));
  }
  return fused;
}

std::vector<int64_t> top_rows(const at::Tensor& scores, int64_t count) {
  auto rows = order(scores);
  if (static_cast<int64_t>(rows.size()) > count) rows.resize(static_cast<size_t>(count));
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace svqa
