#pragma once
// Sampled frames → the backbone's visual units (one frame for LLaVA-OV, one two-frame temporal
// patch for Qwen2.5-VL and Qwen3-VL) with their tokens and their positions in the stream.
// A Qwen3-VL unit carries its timestamp text: "<12.5 seconds><|vision_start|>", the visual tokens,
// "<|vision_end|>" (the manifest's frame_prompt), so a block keeps its time wherever it goes.

#include <cstdint>
#include <vector>

#include "engine/stream_types.h"
#include "models/backbones/backbone.h"
#include "models/video/frame_source.h"

namespace svqa {

class VisualUnitMaker {
 public:
  // `clip_frames`: Qwen3-VL sizes frames as HF sizes a clip of that many frames (its pixel limits
  // count all frames), so every chunk of a stream gets one size; 0: the frames of each call.
  VisualUnitMaker(Backbone& backbone, const Frames& frames, int64_t clip_frames = 0);
  int64_t frames_per_unit() const { return frames_per_unit_; }
  // Frames per unit of a backbone: 1, or Qwen2.5-VL's and Qwen3-VL's temporal patch.
  static int64_t frames_per_unit_of(const Backbone& backbone);

  // Frames [first, first + count) of the stream (count a multiple of frames_per_unit; all within
  // the frames held, which start at stream index `frames.first`) through preprocessing and
  // the vision tower in one call. Positions: 1-D from `next_free` (LLaVA-OV); mRoPE for the
  // stream as one video starting at `video_start` (Qwen2.5-VL): temporal patch k at
  // t = video_start + ⌊k · tokens_per_second · temporal_patch_size / fps⌋, h and w from video_start;
  // Qwen3-VL: from `next_free`, unit after unit, each as get_rope_index places text and a patch.
  // Without `tokens` the vision tower is not run (the units' tokens stay undefined).
  std::vector<VisualUnit> make(int64_t first, int64_t count, int64_t video_start, int64_t next_free, bool tokens = true);

 private:
  // make() for frames [first, first + count) as one preprocessing and tower call, sized as a call of
  // `sizing` frames; `next`, the next free position (LLaVA-OV, Qwen3-VL), is moved past them.
  void make_chunk(int64_t first, int64_t count, int64_t sizing, int64_t video_start, int64_t& next, bool tokens,
                  std::vector<VisualUnit>& out);

  Backbone& backbone_;
  const Frames& frames_;
  int64_t frames_per_unit_ = 1;
  int64_t clip_frames_ = 0;
};

}  // namespace svqa
