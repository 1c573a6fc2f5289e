#pragma once
// InfiniPot-V's choice of the tokens a layer keeps when its cache reaches the cap (Kim et al.,
// NeurIPS 2025; reference code aiha-lab/InfiniPot-V, kvcache_utils.py `process_kv_cache`, method
// `tar_val`), on the layer's visual tokens laid out as frames of `tokens_per_frame`:
//   TaR (temporal redundancy): the last int(frames · query_ratio) frames are kept whole; of the
//     older tokens, those least like the same place in those recent frames (score: minus the mean
//     over recent frames of the cosine of keys at the same index within their frame) fill the TaR
//     budget, keep − round((1 − tar_ratio) · keep);
//   VaN (value norm): every other kept token is among those of largest value norm (‖v‖ over the
//     head dim), optionally averaged over the frame's spatial grid first (layer-adaptive pooling).
//   The TaR tokens get the maximum VaN score + 1, and the top `keep` by that score are kept.
// One token set per layer for all kv heads: svqa's blocks give a token one position for all heads,
// so the reference's per-head scores are averaged over the kv heads before each top-k (the
// reference picks per head). Scores are computed in float32.

#include <ATen/ATen.h>

#include <cstdint>

namespace svqa {

struct TarVanParams {
  int64_t tokens_per_frame = 0;
  int64_t keep_frames = 0;    // the reference's compress_frame_num: keep · tokens_per_frame tokens stay
  double tar_ratio = 0.5;     // share of the kept tokens chosen by TaR (0: VaN alone)
  double query_ratio = 0.25;  // share of the cached frames that are TaR's recent (query) frames
  int64_t pool_dims = -1;     // VaN pooling: 2 (over each frame's grid), 1 (along the tokens), ≤ 0: none
  int64_t pool_size = 3;      // its kernel (stride 1, zero padding of size / 2, counted in the mean)
  int64_t grid_height = 1;    // rows of a frame's token grid (2-D pooling)
};

// The reference's layer-adaptive pooling for `layer` of `layers`: group layer / (layers / 4) of
// dims {2, 2, 1, -1} and sizes {7, 5, 3, 3}. The reference divides by zero under 4 layers and
// indexes past its lists when 4 does not divide the layer count; svqa takes groups of
// max(1, layers / 4) layers and the last group for any beyond.
void adaptive_pooling(int64_t layer, int64_t layers, TarVanParams& params);

// keys (rotated at their positions, as the reference's cache holds them) and values [N, kv_heads, d]
// of one layer's cached visual tokens, N a whole number of frames, more than keep_frames of them:
// the indices kept, ascending ([keep_frames · tokens_per_frame], int64).
at::Tensor tar_van_keep(const at::Tensor& keys, const at::Tensor& values, const TarVanParams& params);

}  // namespace svqa
