#pragma once
// STC-Pruner (lern-to-write/STC, stc/pruner/pruner.py with scoring.py's `gaussian` score, the one the
// authors' ReKV integration runs): each frame's visual tokens cut to `tokens_per_frame` before the LLM.
//   Channels: the channel_keep_ratio of the hidden channels with the lowest variance over the frame's
//   tokens (at least 1). Temporal anchor: the mean, over the frames so far, of each frame's mean token
//   (each in its own frame's channel choice, as the reference averages them). Spatial anchor: the
//   frame's mean token. Score of a token (L2-normalised in the kept channels): its Gaussian similarity
//   to the normalised temporal anchor plus to the spatial anchor, Σ_α exp(−‖x − a‖² / 2α) over
//   α = 2⁻³ … 2¹; the `tokens_per_frame` lowest-scoring tokens are kept, in their order.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "engine/visual_token_reducer.h"

namespace svqa {

struct StcPrunerSettings {
  int64_t tokens_per_frame = 64;
  double channel_keep_ratio = 0.5;
};

class StcPruner final : public VisualTokenReducer {
 public:
  explicit StcPruner(StcPrunerSettings settings) : settings_(settings) {}
  void begin_stream() override { frame_means_.clear(); }
  ReducedTokens reduce(const VisualUnit& unit) override;

 private:
  StcPrunerSettings settings_;
  std::vector<at::Tensor> frame_means_;  // [1, channels kept] per frame so far
};

// The kept rows (ascending) of one frame's tokens [P, hidden] given the frame means so far, to which
// this frame's is appended: the pruner's rule, which StcPruner::reduce applies to each unit.
at::Tensor stc_kept_rows(const at::Tensor& tokens, std::vector<at::Tensor>& frame_means, const StcPrunerSettings& settings);

}  // namespace svqa
