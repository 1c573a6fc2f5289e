#pragma once
// FluxMem's memory rules (Xie et al., CVPR 2026; reference code YiwengXie/FluxMem @ 6fdbf65,
// models/qwen2-5-vl/src/qwen2_5_vl_fluxmem/fluxmem.py, `FluxMem.process_memory_streaming`), over one
// clip's visual tokens before the LLM, frame (temporal patch) by frame in time order:
//
//   short-term  the latest `short_term_units` frames keep every token.
//   mid-term    a frame leaving the short-term buffer keeps the tokens that changed: a token's distance
//               to a frame is 1 − its largest cosine similarity with that frame's 3×3 neighbourhood
//               around its own (h, w); it is kept when its distance to the next frame, or to the
//               previous one, reaches that side's Otsu threshold (each over this frame's distances, 128
//               bins on [0, 2]; the median where they are all equal or Otsu finds no split), unless its
//               similarity to the next frame exceeds `direct_drop_similarity`. A token without a
//               neighbour in the next frame is kept.
//   long-term   a frame leaving the mid-term store (more than `mid_term_units` there) merges its kept
//               tokens: 8-neighbour edges between kept tokens whose cosine distance is at most the
//               Otsu threshold of the frame's edge distances join clusters (connected components);
//               a cluster of two or more becomes one token, the member closest to the cluster's mean
//               (the first on ties), carrying the mean.
//
// Similarities are read from the tokens as they came from the vision tower (a merge changes no later
// comparison): the temporal ones in the tokens' dtype, the merge's in float32, as the reference's.

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/visual_token_reducer.h"

namespace svqa {

struct FluxmemSettings {
  int64_t short_term_units = 4;   // short_term_frames / temporal_patch_size
  int64_t mid_term_units = 32;    // mid_term_frames / temporal_patch_size
  double direct_drop_similarity = 0.8;
};

// One frame of the clip: its tokens [n, dim] and each token's grid row and column (int64 [n]).
struct FluxmemFrame {
  at::Tensor tokens;
  at::Tensor rows, cols;
};

// Where a frame's tokens stood when the clip ended.
enum class FluxmemStage { ShortTerm, MidTerm, LongTerm };

struct FluxmemFrameResult {
  ReducedTokens kept;  // rows ascending; a merged cluster's anchor carries the cluster's mean
  FluxmemStage stage = FluxmemStage::ShortTerm;
  int64_t merged_away = 0;  // tokens dropped into another's cluster (long-term)
};

// `_otsu_threshold`: the threshold on `values` clamped to [0, 2] (128 bins); nullopt where the
// reference returns None.
std::optional<double> fluxmem_otsu(const at::Tensor& values, bool fallback_to_median);

// The clip's frames reduced, in order.
std::vector<FluxmemFrameResult> fluxmem_reduce_clip(const std::vector<FluxmemFrame>& frames, const FluxmemSettings& s);

}  // namespace svqa
