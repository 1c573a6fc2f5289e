#pragma once
// StreamKV's layer-adaptive budget (reference code sou1p0wer/StreamKV, `obtain_cdf_num` and
// `rescale_sum_match`): how many blocks each layer keeps (compression) or retrieves, given every
// layer's scores over its candidates and a total. Layers whose scores are peaked take fewer.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace svqa {

// obtain_cdf_num: per layer p = softmax((s − mean) / std) (unbiased std; a uniform p where there
// is one candidate or std = 0, where the reference code gives NaN), sorted descending, cumulated
// to C_l; K_l(π) = max(1, #{k : C_l(k) < π}). Bisection on π in [0, 1] until |Σ K_l − target| < 5
// or the interval is ≤ 1e-6. `scores`: one float32 vector per layer (lengths may differ).
std::vector<int64_t> cdf_layer_counts(const std::vector<at::Tensor>& scores, int64_t target);

// rescale_sum_match: unless all counts are equal (returned as they are), min-max rescale into
// [lo, hi], scale to the original sum, round half to even, clip to [lo, hi], then one pass that
// adds 1 to the smallest (or takes 1 from the largest) entries, within the bounds, until the sum
// is the original one; truncated to integers. Ties go in layer order (numpy's default argsort,
// which the reference code uses, is not stable and its tie order depends on the CPU).
std::vector<int64_t> rescale_sum_match(const std::vector<int64_t>& counts, double lo, double hi);

}  // namespace svqa
