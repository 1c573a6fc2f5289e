#include "models/video/frame_indices.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/video/frame_preprocessor.h"

namespace svqa {

namespace {

double floor_by(double x, int64_t factor) { return std::floor(x / static_cast<double>(factor)) * static_cast<double>(factor); }
double ceil_by(double x, int64_t factor) { return std::ceil(x / static_cast<double>(factor)) * static_cast<double>(factor); }

}  // namespace

int64_t qwen_smart_nframes(int64_t total_frames, double video_fps, const QwenFrameRule& rule) {
  if (!(video_fps > 0)) throw std::invalid_argument("qwen_smart frames: the video's frame rate is not positive");
  const auto total = static_cast<double>(total_frames);
  const double min_frames = ceil_by(static_cast<double>(rule.min_frames), rule.frame_factor);
  const double max_frames = floor_by(std::min(static_cast<double>(rule.max_frames), total), rule.frame_factor);
  const double wanted = total / video_fps * rule.fps;  // the reference's order of operations
  const auto n = static_cast<int64_t>(floor_by(std::min(std::min(std::max(wanted, min_frames), max_frames), total),
                                               rule.frame_factor));
  if (n < rule.frame_factor || n > total_frames)
    throw std::invalid_argument("qwen_smart frames: " + std::to_string(n) + " frames from a video of " +
                                std::to_string(total_frames) + " (expected between " +
                                std::to_string(rule.frame_factor) + " and the video's count)");
  return n;
}

std::vector<int64_t> qwen_frame_indices(int64_t total_frames, double video_fps, const QwenFrameRule& rule) {
  const int64_t n = qwen_smart_nframes(total_frames, video_fps, rule);
  // at::linspace is the kernel torch.linspace runs: the float32 values, and so their rounding, are the reference's.
  const at::Tensor idx = at::linspace(0, static_cast<double>(total_frames - 1), n, at::kFloat).round().to(at::kLong);
  return {idx.data_ptr<int64_t>(), idx.data_ptr<int64_t>() + n};
}

std::pair<int64_t, int64_t> qwen_video_frame_size(int64_t height, int64_t width, int64_t nframes,
                                                  const QwenVideoPixels& pixels, int64_t frame_factor) {
  const auto f2 = static_cast<double>(pixels.factor * pixels.factor);
  const int64_t min_pixels = pixels.min_pixels > 0 ? pixels.min_pixels : static_cast<int64_t>(128 * f2);
  const double cap = pixels.max_pixels > 0 ? static_cast<double>(pixels.max_pixels) : 768 * f2;
  const double total = pixels.total_pixels > 0 ? pixels.total_pixels : 128000 * f2 * 0.9;
  double max_pixels = std::max(std::min(cap, total / static_cast<double>(nframes) * static_cast<double>(frame_factor)),
                               std::floor(static_cast<double>(min_pixels) * 1.05));
  if (pixels.asked_max_pixels > 0) max_pixels = std::min(max_pixels, static_cast<double>(pixels.asked_max_pixels));
  return qwen_smart_resize(height, width, pixels.factor, min_pixels, max_pixels);  // fractional as the reference's
}

}  // namespace svqa
