#pragma once
// StreamingTOM's Causal Temporal Reduction (YIGE24/StreamingTOM, streamingtom/modules/ctr.py):
// each frame's visual tokens, before the LLM, become `retain_tokens` (196 -> 50 on LLaVA-OV).
//
//   1. classify: token i is static when its cosine similarity with token i of the previous frame
//      (the previous unit's, across calls) exceeds `similarity_threshold`; the stream's first frame
//      is all dynamic.
//   2. budgets: static int(retain · static / n), dynamic the rest, moved to the other side where
//      one side has fewer tokens than its budget.
//   3. static tokens: density-peak clustering (DPC-kNN, `k` neighbours, distances / √dim, a 1e-6
//      random tie-break) picks `static budget` centres; every other static token joins its nearest
//      centre, and a centre becomes beta · itself + (1 − beta) · its members' mean.
//   4. dynamic tokens: the top `dynamic budget` by importance.
//   5. the kept tokens in their original order.
//
// Importance: the reference takes the attention each patch receives in the SigLIP tower's last
// layer (mean over heads and queries, pooled 2×2 like the tokens). svqa's exported vision tower
// does not return attention, so a token's importance here is how far it stands from its frame's
// mean token, 1 − cosine similarity (ctr_distinctiveness; docs/strategies.md). ctr_reduce_frame
// takes any importance, so the reference's rule itself is tested as written.

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>

#include "engine/visual_token_reducer.h"

namespace svqa {

struct CtrSettings {
  int64_t retain_tokens = 50;
  double similarity_threshold = 0.9;
  int64_t k = 7;
  double beta = 0.6;
};

// Step 1: static (true) / dynamic per token of `frame` [n, dim] against `previous` (undefined: all dynamic).
at::Tensor ctr_static_mask(const at::Tensor& frame, const at::Tensor& previous, double threshold);
// Step 2: (static budget, dynamic budget).
std::pair<int64_t, int64_t> ctr_budgets(int64_t retain, int64_t static_count, int64_t dynamic_count);
// Step 3's clustering: the centres, ascending indices into `tokens` [s, dim]; the tie-break noise
// (uniform [s] · 1e-6) drawn from `generator` when s > 1, as the reference draws it.
at::Tensor ctr_dpc_centres(const at::Tensor& tokens, int64_t clusters, int64_t k, at::Generator& generator);
// Steps 2-5 for one frame [n, dim]: the kept rows and their (merged) tokens; at most retain_tokens
// (n where the frame has fewer).
ReducedTokens ctr_reduce_frame(const at::Tensor& frame, const at::Tensor& static_mask, const at::Tensor& importance,
                               const CtrSettings& s, at::Generator& generator);
// svqa's importance of each token of `frame` [n, dim]: 1 − its cosine similarity with the frame's mean token.
at::Tensor ctr_distinctiveness(const at::Tensor& frame);

class CtrReducer final : public VisualTokenReducer {
 public:
  // `seed`: the tie-break noise's generator (the runtime's seed), restarted with every stream.
  CtrReducer(CtrSettings settings, uint64_t seed) : settings_(settings), seed_(seed) { begin_stream(); }
  void begin_stream() override;
  ReducedTokens reduce(const VisualUnit& unit) override;

 private:
  CtrSettings settings_;
  uint64_t seed_;
  at::Generator generator_;
  at::Tensor previous_;  // the previous frame's tokens (before reduction), float32
};

}  // namespace svqa
