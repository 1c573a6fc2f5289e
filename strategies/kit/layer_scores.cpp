#include "strategies/kit/layer_scores.h"

#include <algorithm>
#include <numeric>

namespace svqa {

LayerScores score_layer(const LayerQuery& query, const MemoryBank& bank, const std::string& similarity) {
  LayerScores out;
  out.ids = bank.representative_ids(query.layer);
  if (out.ids.empty()) {
    out.scores = at::empty({0}, at::kDouble);
    return out;
  }
  const auto reps = bank.representatives(query.layer);  // [n, kv_heads * d]
  const auto q = query.queries.to(reps.device(), at::kFloat).mean(0);  // [heads, d]
  const int64_t kv_heads = reps.size(1) / q.size(1);
  at::Tensor scores = at::matmul(reps, grouped_query(q, kv_heads));
  // The reference's cosine is against k̄ repeated over the group: its norm is √group · |k̄|.
  const double group = static_cast<double>(q.size(0) / kv_heads);
  if (similarity == "cosine") scores = scores / (reps.norm(2, 1) * (std::sqrt(group) * q.norm()) + 1e-12);
  out.scores = scores.to(at::kCPU, at::kDouble).contiguous();
  return out;
}

std::vector<int64_t> top_groups(const at::Tensor& scores, int64_t count, int64_t chunk) {
  const int64_t n = scores.size(0);
  std::vector<int64_t> rows;
  if (n <= count) {
    rows.resize(static_cast<size_t>(n));
    std::iota(rows.begin(), rows.end(), 0);
    return rows;
  }
  const int64_t groups = (n + chunk - 1) / chunk;
  const auto padded = at::cat({scores, at::zeros({groups * chunk - n}, scores.options())});
  auto sums = padded.view({groups, chunk}).sum(1);
  auto sizes = at::full({groups}, static_cast<double>(chunk), scores.options());
  sizes[groups - 1] = static_cast<double>(n - (groups - 1) * chunk);
  // The chosen groups read back at once (one copy; item() per group was a wait per group on a GPU).
  const auto top = std::get<1>(at::topk(sums / sizes, std::min(count / chunk, groups))).to(at::kCPU, at::kLong).contiguous();
  const int64_t* chosen = top.data_ptr<int64_t>();
  for (int64_t i = 0; i < top.size(0); ++i) {
    const int64_t group = chosen[i];
    for (int64_t r = group * chunk; r < std::min(n, (group + 1) * chunk); ++r) rows.push_back(r);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

void LayerScoreMeans::add(const std::vector<int64_t>& ids, const at::Tensor& scores) {
  const auto s = scores.to(at::kCPU, at::kDouble).contiguous();
  const double* score = s.data_ptr<double>();
  for (size_t i = 0; i < ids.size(); ++i) {
    auto& sum = sums_[ids[i]];
    sum.first += score[i];
    sum.second += 1;
  }
}

std::map<int64_t, double> LayerScoreMeans::means() const {
  std::map<int64_t, double> mean;
  for (const auto& [id, sum] : sums_) mean[id] = sum.first / static_cast<double>(sum.second);
  return mean;
}

}  // namespace svqa
