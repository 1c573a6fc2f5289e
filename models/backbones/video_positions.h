#pragma once
// Rotary positions of a video's visual tokens, per architecture.

#include <ATen/ATen.h>

#include <cstdint>

#include "models/video/image_spec.h"
#include "models/loading/manifest.h"

namespace svqa {

// Positions [3, n] of the n visual tokens of `input` (as Backbone::encode_frames orders them) when
// the video starts at position `start`; `fps` is the rate the frames were sampled at.
//   LLaVA-OV: consecutive 1-D positions.
//   Qwen2.5-VL: mRoPE (t, h, w) = (start + ⌊i_t · tokens_per_second · temporal_patch_size / fps⌋,
//   start + i_h, start + i_w), as HF's get_rope_index, in float32 like HF. `first_temporal_patch`
//   numbers i_t from there, for a clip that continues a longer video (a stream's later units).
//   Qwen3-VL: one temporal patch (t = 1) at (start, start + i_h, start + i_w); text resumes at
//   start + max(h, w) (next_position). Its time is in the timestamp text before it, not in t.
at::Tensor video_positions(const Manifest& m, const VisualInput& input, int64_t num_tokens, int64_t start, double fps,
                           int64_t first_temporal_patch = 0);

}  // namespace svqa
