#pragma once
// Reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009), as Mem-Stream fuses its
// internal and external retrieval experts (§4.2):
//
//   RRF(t) = Σ_r  w_r / (k + rank_r(t))
//
// rank_r(t) is 1 for the best item of ranking r (higher score first; equal scores: the earlier row
// first). An item absent from a ranking (NaN score) gets nothing from it, as in Cormack et al.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace svqa {

// 1-based ranks of `scores` ([n] float64 CPU): descending, ties to the lower row; NaN rows get 0
// (absent) and do not take a rank.
std::vector<int64_t> descending_ranks(const at::Tensor& scores);

// Fused scores [n] float64 of `rankings` (each [n] float64 CPU, rows aligned), one weight each.
at::Tensor reciprocal_rank_fusion(const std::vector<at::Tensor>& rankings, const std::vector<double>& weights,
                                  double k);

// The `count` best rows of `scores` (descending, ties to the lower row), returned ascending.
std::vector<int64_t> top_rows(const at::Tensor& scores, int64_t count);

}  // namespace svqa
