#pragma once
// Frames → what a backbone's vision module consumes, computed as the Hugging Face video
// processors of transformers 5.23 do (LlavaOnevisionVideoProcessor, Qwen2VLVideoProcessor,
// Qwen3VLVideoProcessor).

#include <ATen/ATen.h>

#include <cstdint>
#include <utility>

#include "models/video/image_spec.h"

namespace svqa {

// `rgb` is uint8 [F, H, W, 3] (Frames::rgb); the work runs on its device. On CPU the result is
// bit-identical to the HF processors' (same LibTorch kernels); see docs/video_input.md.
// Throws std::invalid_argument for a wrong dtype or shape, or a frame Qwen's rule cannot resize.
// Qwen3-VL's size depends on the clip's frame count: `clip_frames` > 0 sizes the frames as HF sizes
// a clip of that many frames (a stream's chunks all take one size); 0: the frames given.
// With spec.qwen_vl_utils, a Qwen clip's frames are sized as qwen-vl-utils' fetch_video sizes a clip of
// `clip_frames` (else the frames given) frames, then as the processor sizes those (qwen_processor_size).
VisualInput preprocess_frames(const at::Tensor& rgb, const ImageSpec& spec, int64_t clip_frames = 0);

// preprocess_frames in its two steps, preprocess_frames(rgb) == clip_input(normalized_frames(rgb)):
// the frames resized, rescaled and normalised (float [F, 3, h, w]; each frame on its own, so a
// frame can be prepared alone as it is decoded, `clip_frames` then its clip's size), and what the
// clip's frames become together (Qwen's patches over temporal pairs; the frames as they are otherwise).
at::Tensor normalized_frames(const at::Tensor& rgb, const ImageSpec& spec, int64_t clip_frames = 0);
VisualInput clip_input(const at::Tensor& normalized, const ImageSpec& spec);
// The (height, width) a Qwen rule (QwenSmart, Qwen3Smart) resizes a clip of `clip_frames` frames of
// height × width to: fetch_video's size first where spec.qwen_vl_utils is set, then the processor's
// smart_resize (Qwen2.5-VL; Qwen3-VL's is skipped after fetch_video, as its model card's do_resize=False).
std::pair<int64_t, int64_t> qwen_processor_size(int64_t height, int64_t width, int64_t clip_frames,
                                                const ImageSpec& spec);

// Qwen2-VL's smart_resize: (height, width) as multiples of `factor` with height * width in
// [min_pixels, max_pixels], aspect ratio kept as closely as possible. max_pixels may be fractional, as
// qwen-vl-utils' per-frame video budget is (total_pixels / frames · 2): the scale is computed from it.
std::pair<int64_t, int64_t> qwen_smart_resize(int64_t height, int64_t width, int64_t factor, int64_t min_pixels,
                                              double max_pixels);

// Qwen3-VL's smart_resize: as Qwen2-VL's, with the pixel limits applied to t' · h · w, t' the frame
// count rounded to whole temporal patches, and frames under `factor` per side first scaled up.
std::pair<int64_t, int64_t> qwen3_smart_resize(int64_t frames, int64_t height, int64_t width, int64_t temporal_factor,
                                               int64_t factor, int64_t min_pixels, int64_t max_pixels);

}  // namespace svqa
