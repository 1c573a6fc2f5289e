#include "strategies/encoding/streamingtom/ctr_reducer.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace svqa {
namespace {

// torch.nn.functional.normalize(x, p=2, dim=-1) in float32.
at::Tensor unit_rows(const at::Tensor& x) {
  const at::Tensor f = x.to(at::kFloat);
  return f / f.norm(2, -1, true).clamp_min(1e-12);
}

// Pairwise distances / √dim, float32 (the reference's DPC and merge distances).
at::Tensor scaled_distances(const at::Tensor& tokens) {
  const at::Tensor f = tokens.to(at::kFloat);
  return at::cdist(f, f) / std::sqrt(static_cast<double>(tokens.size(1)));
}

// Step 3's merge: each non-centre static token joins its nearest centre; a centre with members
// becomes beta · itself + (1 − beta) · their mean.
at::Tensor merge_into_centres(const at::Tensor& tokens, const at::Tensor& centres, double beta) {
  const int64_t s = tokens.size(0);
  if (centres.numel() == s) return tokens.index_select(0, centres);
  at::Tensor is_centre = at::zeros({s}, at::kBool);
  is_centre.index_fill_(0, centres, true);
  const at::Tensor others = at::nonzero(is_centre.logical_not()).flatten();
  if (others.numel() == 0) return tokens.index_select(0, centres);
  const at::Tensor assignment = scaled_distances(tokens).index_select(0, others).index_select(1, centres).argmin(1);
  std::vector<at::Tensor> merged;
  for (int64_t i = 0; i < centres.numel(); ++i) {
    const at::Tensor centre = tokens[centres[i].item<int64_t>()];
    const at::Tensor members = others.masked_select(assignment == i);
    merged.push_back(members.numel() ? beta * centre + (1 - beta) * tokens.index_select(0, members).mean(0) : centre);
  }
  return at::stack(merged);
}

}  // namespace

at::Tensor ctr_static_mask(const at::Tensor& frame, const at::Tensor& previous, double threshold) {
  if (!previous.defined()) return at::zeros({frame.size(0)}, at::kBool);
  return (unit_rows(frame) * unit_rows(previous)).sum(-1) > threshold;
}

std::pair<int64_t, int64_t> ctr_budgets(int64_t retain, int64_t static_count, int64_t dynamic_count) {
  const int64_t total = static_count + dynamic_count;
  int64_t static_budget = total ? retain * static_count / total : 0;  // int(retain · static / total)
  int64_t dynamic_budget = retain - static_budget;
  if (static_budget > static_count) static_budget = static_count, dynamic_budget = retain - static_budget;
  if (dynamic_budget > dynamic_count) dynamic_budget = dynamic_count, static_budget = retain - dynamic_budget;
  return {static_budget, dynamic_budget};
}

at::Tensor ctr_dpc_centres(const at::Tensor& tokens, int64_t clusters, int64_t k, at::Generator& generator) {
  const int64_t s = tokens.size(0);
  if (s <= 1) return at::arange(s, at::kLong);
  const at::Tensor dist = scaled_distances(tokens);
  const at::Tensor nearest = std::get<0>(dist.topk(std::min(k, s - 1), -1, /*largest=*/false));
  const at::Tensor density = (-nearest.pow(2).mean(-1)).exp() + at::rand({s}, generator) * 1e-6;
  const at::Tensor higher = density.unsqueeze(1) > density.unsqueeze(0);
  const at::Tensor to_higher = std::get<0>(at::where(higher, dist, dist.max()).min(-1));
  const at::Tensor centres = std::get<1>((density * to_higher).topk(std::min(clusters, s)));
  return std::get<0>(centres.sort());
}

ReducedTokens ctr_reduce_frame(const at::Tensor& frame, const at::Tensor& static_mask, const at::Tensor& importance,
                               const CtrSettings& s, at::Generator& generator) {
  const int64_t n = frame.size(0), retain = std::min(s.retain_tokens, n);
  const at::Tensor static_rows = at::nonzero(static_mask).flatten();
  const at::Tensor dynamic_rows = at::nonzero(static_mask.logical_not()).flatten();
  const auto [static_budget, dynamic_budget] = ctr_budgets(retain, static_rows.numel(), dynamic_rows.numel());
  std::vector<at::Tensor> rows, tokens;
  if (static_budget > 0 && static_rows.numel() > 0) {
    const at::Tensor statics = frame.index_select(0, static_rows);
    const at::Tensor centres = ctr_dpc_centres(statics, static_budget, s.k, generator);
    rows.push_back(static_rows.index_select(0, centres));
    tokens.push_back(merge_into_centres(statics, centres, s.beta));
  }
  if (dynamic_budget > 0 && dynamic_rows.numel() > 0) {
    const int64_t keep = std::min(dynamic_budget, dynamic_rows.numel());
    const at::Tensor top = std::get<1>(importance.index_select(0, dynamic_rows).topk(keep));
    rows.push_back(dynamic_rows.index_select(0, top));
    tokens.push_back(frame.index_select(0, rows.back()));
  }
  if (rows.empty()) return {at::empty({0}, at::kLong), frame.narrow(0, 0, 0)};
  const at::Tensor all_rows = at::cat(rows), order = all_rows.argsort();
  const int64_t kept = std::min(retain, all_rows.numel());
  return {all_rows.index_select(0, order).narrow(0, 0, kept), at::cat(tokens).index_select(0, order).narrow(0, 0, kept)};
}

at::Tensor ctr_distinctiveness(const at::Tensor& frame) {
  return 1 - (unit_rows(frame) * unit_rows(frame.to(at::kFloat).mean(0, true))).sum(-1);
}

void CtrReducer::begin_stream() {
  generator_ = at::make_generator<at::CPUGeneratorImpl>(seed_);
  previous_ = at::Tensor();
}

ReducedTokens CtrReducer::reduce(const VisualUnit& unit) {
  const at::Tensor frame = unit.tokens.to(at::kCPU);
  const at::Tensor static_mask = ctr_static_mask(frame, previous_, settings_.similarity_threshold);
  previous_ = frame;
  return ctr_reduce_frame(frame, static_mask, ctr_distinctiveness(frame), settings_, generator_);
}

}  // namespace svqa
