#include "strategies/encoding/fluxmem/fluxmem_rules.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace svqa {
namespace {

// F.normalize(x, p=2, dim=1, eps=1e-8), in x's dtype.
at::Tensor unit_rows(const at::Tensor& x) { return x / x.norm(2, 1, true).clamp_min(1e-8); }

// The reference's _OFFSETS_3X3 (with the centre) and _OFFSETS_NEIGHBOR (without), in its order.
at::Tensor neighbour_offsets(bool include_centre) {
  std::vector<int64_t> flat;
  for (int64_t dh = -1; dh <= 1; ++dh)
    for (int64_t dw = -1; dw <= 1; ++dw)
      if (include_centre || dh || dw) flat.insert(flat.end(), {dh, dw});
  return at::tensor(flat, at::kLong).view({-1, 2});
}

// A [rows + 2, cols + 2] grid of -1 holding `values` at (row + 1, col + 1).
at::Tensor padded_grid(const at::Tensor& rows, const at::Tensor& cols, const at::Tensor& values, int64_t h, int64_t w) {
  at::Tensor grid = at::full({h + 2, w + 2}, -1, at::kLong);
  grid.index_put_({rows + 1, cols + 1}, values);
  return grid;
}

// [n, offsets]: the grid entry at each of the n cells (rows, cols) moved by each offset.
at::Tensor neighbours(const at::Tensor& grid, const at::Tensor& rows, const at::Tensor& cols, const at::Tensor& offsets) {
  const at::Tensor r = (rows + 1).view({-1, 1}) + offsets.select(1, 0).view({1, -1});
  const at::Tensor c = (cols + 1).view({-1, 1}) + offsets.select(1, 1).view({1, -1});
  return grid.index({r, c});
}

// `_max_sim_against_frames` for one neighbour frame: the query tokens with a neighbour there (local
// indices), their largest similarity and distance (1 − it), and which tokens have a neighbour.
struct Match {
  at::Tensor with_neighbour, max_similarity, distance, has_neighbour;
};

class Clip {
 public:
  Clip(const std::vector<FluxmemFrame>& frames, const FluxmemSettings& s) : frames_(frames), s_(s) {
    for (const auto& f : frames) h_ = std::max(h_, f.rows.max().item<int64_t>() + 1), w_ = std::max(w_, f.cols.max().item<int64_t>() + 1);
    for (const auto& f : frames) {
      const int64_t n = f.tokens.size(0);
      unit_.push_back(unit_rows(f.tokens));
      grid_.push_back(padded_grid(f.rows, f.cols, at::arange(n, at::kLong), h_, w_));
      prev_distance_.push_back(at::full({n}, -1.0, f.tokens.options()));
      keep_.push_back(at::zeros({n}, at::kBool));
      tokens_.push_back(f.tokens.clone());
      results_.emplace_back();
    }
  }

  std::vector<FluxmemFrameResult> run();

 private:
  Match match(size_t query, size_t other) const;
  void prune(size_t frame, size_t next);
  void merge(size_t frame);

  const std::vector<FluxmemFrame>& frames_;
  const FluxmemSettings& s_;
  int64_t h_ = 0, w_ = 0;
  std::vector<at::Tensor> unit_, grid_, prev_distance_, keep_, tokens_;
  std::vector<FluxmemFrameResult> results_;
};

Match Clip::match(size_t query, size_t other) const {
  static const at::Tensor offsets = neighbour_offsets(true);
  const FluxmemFrame& q = frames_[query];
  const at::Tensor nb = neighbours(grid_[other], q.rows, q.cols, offsets);
  const at::Tensor valid = nb >= 0, has = valid.any(1);
  if (!has.any().item<bool>()) throw std::runtime_error("fluxmem: no neighbours found for window/pair matching");
  const at::Tensor with = at::nonzero(has).flatten();
  const at::Tensor nbm = nb.index_select(0, with), validm = valid.index_select(0, with);
  const at::Tensor features = unit_[other].index_select(0, nbm.clamp_min(0).flatten()).view({nbm.size(0), nbm.size(1), -1});
  const at::Tensor sims = (features * unit_[query].index_select(0, with).unsqueeze(1))
                              .sum(2)
                              .masked_fill(validm.logical_not(), -std::numeric_limits<double>::infinity());
  const at::Tensor best = std::get<0>(sims.max(1));
  return {with, best, 1.0 - best, has};
}

double otsu_or_throw(const at::Tensor& values) {
  const auto t = fluxmem_otsu(values, true);
  if (!t) throw std::runtime_error("fluxmem: empty set for Otsu thresholding");
  return *t;
}

// `_apply_adjacent_pruning`: which tokens of `frame` stay once it leaves the short-term buffer.
void Clip::prune(size_t frame, size_t next) {
  const Match m = match(frame, next);
  at::Tensor& keep = keep_[frame];
  keep.masked_fill_(m.has_neighbour.logical_not(), true);
  at::Tensor keep_local = m.distance >= otsu_or_throw(m.distance);
  const at::Tensor prev = prev_distance_[frame], valid_prev = prev >= 0;
  if (valid_prev.any().item<bool>()) {
    const double prev_threshold = otsu_or_throw(prev.masked_select(valid_prev));
    keep_local = keep_local.logical_or(prev.index_select(0, m.with_neighbour) >= prev_threshold);
  }
  if (m.with_neighbour.numel() > 0) keep_local = keep_local.logical_and((m.max_similarity > s_.direct_drop_similarity).logical_not());
  keep.index_fill_(0, m.with_neighbour.masked_select(keep_local), true);
}

// Connected components of `n` nodes under `edges` (i, j): each node's label, its component's smallest node.
at::Tensor components(int64_t n, const at::Tensor& edge_i, const at::Tensor& edge_j) {
  std::vector<int64_t> parent(static_cast<size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  const auto root = [&](int64_t x) {
    while (parent[static_cast<size_t>(x)] != x) x = parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
    return x;
  };
  const auto ei = edge_i.accessor<int64_t, 1>(), ej = edge_j.accessor<int64_t, 1>();
  for (int64_t e = 0; e < edge_i.numel(); ++e) {
    const int64_t a = root(ei[e]), b = root(ej[e]);
    parent[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
  }
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t x = 0; x < n; ++x) labels[static_cast<size_t>(x)] = root(x);
  return at::tensor(labels, at::kLong);
}

// `_long_term_memory_merge_per_frames` for one frame: its kept tokens clustered; a cluster's
// anchor carries the cluster's mean and the rest leave.
void Clip::merge(size_t frame) {
  static const at::Tensor offsets = neighbour_offsets(false);
  const at::Tensor kept = at::nonzero(keep_[frame]).flatten();
  const int64_t n = kept.numel();
  if (n <= 1) return;
  const FluxmemFrame& f = frames_[frame];
  const at::Tensor grid = padded_grid(f.rows.index_select(0, kept), f.cols.index_select(0, kept), at::arange(n, at::kLong), h_, w_);
  const at::Tensor nb = neighbours(grid, f.rows.index_select(0, kept), f.cols.index_select(0, kept), offsets);
  const at::Tensor source = at::arange(n, at::kLong).unsqueeze(1).expand_as(nb);
  const at::Tensor upper = (nb >= 0).logical_and(nb > source);
  if (!upper.any().item<bool>()) return;
  at::Tensor edge_i = source.masked_select(upper), edge_j = nb.masked_select(upper);
  const at::Tensor features = tokens_[frame].index_select(0, kept).to(at::kFloat);
  const at::Tensor unit = unit_rows(features);
  const at::Tensor distance = (1.0 - (unit.index_select(0, edge_i) * unit.index_select(0, edge_j)).sum(1)).clamp(0.0, 2.0);
  const auto threshold = fluxmem_otsu(distance, false);
  if (!threshold) return;
  const at::Tensor join = distance <= *threshold;
  if (!join.any().item<bool>()) return;
  edge_i = edge_i.masked_select(join), edge_j = edge_j.masked_select(join);
  const at::Tensor inverse = std::get<1>(at::_unique(components(n, edge_i, edge_j), true, true));
  const int64_t clusters = inverse.max().item<int64_t>() + 1;
  const at::Tensor counts = at::zeros({clusters}, at::kFloat).index_add_(0, inverse, at::ones({n}, at::kFloat)).clamp_min(1.0);
  const at::Tensor mean = at::zeros({clusters, features.size(1)}, at::kFloat).index_add_(0, inverse, features) / counts.unsqueeze(1);
  const at::Tensor squared = (features - mean.index_select(0, inverse)).pow(2).sum(1);
  const at::Tensor least = at::full({clusters}, std::numeric_limits<float>::infinity(), at::kFloat)
                               .scatter_reduce(0, inverse, squared, "amin", true);
  const at::Tensor candidates = at::nonzero(squared == least.index_select(0, inverse)).flatten();
  const at::Tensor anchor_all = at::full({clusters}, n, at::kLong).scatter_reduce(0, inverse.index_select(0, candidates), candidates, "amin", true);
  const at::Tensor merged = counts > 1.0;
  if (!merged.any().item<bool>()) return;
  const at::Tensor anchor = anchor_all.masked_select(merged);
  tokens_[frame].index_put_({kept.index_select(0, anchor)}, mean.index({merged}).to(tokens_[frame].scalar_type()));
  at::Tensor local_keep = at::ones({n}, at::kBool);
  local_keep.masked_fill_(merged.index_select(0, inverse), false);
  local_keep.index_fill_(0, anchor, true);
  keep_[frame].index_fill_(0, kept.masked_select(local_keep.logical_not()), false);
  results_[frame].merged_away = n - local_keep.sum().item<int64_t>();
}

std::vector<FluxmemFrameResult> Clip::run() {
  std::deque<size_t> short_term, mid_term;
  const size_t short_cap = static_cast<size_t>(std::max<int64_t>(1, s_.short_term_units));
  const size_t mid_cap = static_cast<size_t>(std::max<int64_t>(0, s_.mid_term_units));
  for (size_t g = 0; g < frames_.size(); ++g) {
    short_term.push_back(g);
    if (g > 0) {
      const Match m = match(g, g - 1);
      prev_distance_[g].index_put_({m.with_neighbour}, m.distance);
    }
    if (short_term.size() <= short_cap) continue;
    const size_t evicted = short_term.front();
    short_term.pop_front();
    prune(evicted, short_term.front());
    results_[evicted].stage = FluxmemStage::MidTerm;
    mid_term.push_back(evicted);
    if (mid_term.size() <= mid_cap) continue;
    const size_t oldest = mid_term.front();
    mid_term.pop_front();
    merge(oldest);
    results_[oldest].stage = FluxmemStage::LongTerm;
  }
  for (const size_t g : short_term) keep_[g].fill_(true);
  for (size_t g = 0; g < frames_.size(); ++g) {
    const at::Tensor rows = at::nonzero(keep_[g]).flatten();
    results_[g].kept = {rows, tokens_[g].index_select(0, rows)};
  }
  return results_;
}

}  // namespace

std::optional<double> fluxmem_otsu(const at::Tensor& values, bool fallback_to_median) {
  if (values.numel() == 0) return std::nullopt;
  const at::Tensor v = values.detach().to(at::kFloat).clamp(0.0, 2.0);
  const auto median = [&] { return static_cast<double>(at::median(v).item<float>()); };
  if (fallback_to_median && v.var().item<float>() <= 1e-12) return median();
  constexpr int64_t bins = 128;
  const at::Tensor hist = at::histc(v, bins, 0.0, 2.0);
  const double total = hist.sum().item<float>();
  if (total <= 0) return fallback_to_median ? std::optional<double>(median()) : std::nullopt;
  const at::Tensor p = hist / total;
  const double step = 2.0 / bins;
  const at::Tensor centres = (at::arange(bins, at::kFloat) + 0.5) * step;
  const at::Tensor omega = at::cumsum(p, 0), mu_k = at::cumsum(p * centres, 0);
  const at::Tensor mu_total = mu_k[-1];
  const at::Tensor denom = (omega * (1.0 - omega)).clamp_min(1e-12);
  at::Tensor sigma = (mu_total * omega - mu_k).pow(2) / denom;
  sigma.masked_fill_(omega < 1e-6, -1);
  sigma.masked_fill_((1.0 - omega) < 1e-6, -1);
  const int64_t index = sigma.argmax().item<int64_t>();
  if (sigma[index].item<float>() <= 0.0) return fallback_to_median ? std::optional<double>(median()) : std::nullopt;
  return (static_cast<double>(index) + 0.5) * step;
}

std::vector<FluxmemFrameResult> fluxmem_reduce_clip(const std::vector<FluxmemFrame>& frames, const FluxmemSettings& s) {
  if (frames.empty()) return {};
  return Clip(frames, s).run();
}

}  // namespace svqa
