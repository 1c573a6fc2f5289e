#pragma once
// Which frames of a video a reference keeps, and at what size, when its rule is not svqa's stride
// (frame_source.h's FrameStep). Pure functions of the stream's frame count, average rate and the
// rule's constants: the decoder asks them for the kept indices before it decodes.

#include <cstdint>
#include <utility>
#include <vector>

#include "models/video/image_spec.h"

namespace svqa {

// stream.frame_step's name for qwen-vl-utils' rule (fetch_video → smart_nframes): the frame count is
// the video's duration × fps, clamped to [min_frames, min(max_frames, count)] and rounded down to
// the frame factor; the kept frames are spread evenly over the whole video.
inline constexpr const char* kQwenSmartFrameStep = "qwen_smart";

// qwen-vl-utils' constants (vision_process.py; the same in the Qwen2.5-VL and Qwen3-VL releases).
struct QwenFrameRule {
  double fps = 2.0;          // FPS, or the caller's {"fps": ...}
  int64_t frame_factor = 2;  // FRAME_FACTOR: frames come in whole temporal patches
  int64_t min_frames = 4;    // FPS_MIN_FRAMES
  int64_t max_frames = 768;  // FPS_MAX_FRAMES
};

// smart_nframes(ele={"fps": rule.fps}, total_frames, video_fps). Throws std::invalid_argument, as
// the reference raises, when the result leaves [frame_factor, total_frames] (a video of < 2 frames).
int64_t qwen_smart_nframes(int64_t total_frames, double video_fps, const QwenFrameRule& rule);

// The kept frame indices: torch.linspace(0, total_frames - 1, n).round() in float32 (torch's
// default dtype, halves to even), n = qwen_smart_nframes; ascending, repeats possible when n is
// close to total_frames.
std::vector<int64_t> qwen_frame_indices(int64_t total_frames, double video_fps, const QwenFrameRule& rule);

// The (height, width) fetch_video resizes every frame of an n-frame clip of height × width frames to:
// smart_resize(h, w, factor, min_pixels, max(min(cap, total_pixels / n · frame_factor),
// int(1.05 · min_pixels))), lowered to asked_max_pixels when that is smaller. Its pixel bounds,
// fetch_video's: QwenVideoPixels (image_spec.h); Qwen2.5-VL's release fixes total_pixels at
// 128000 · 28² · 0.9, Qwen3-VL's at MODEL_SEQ_LEN 128000 · 32² · 0.9: the same rule.
std::pair<int64_t, int64_t> qwen_video_frame_size(int64_t height, int64_t width, int64_t nframes,
                                                  const QwenVideoPixels& pixels, int64_t frame_factor = 2);

}  // namespace svqa
