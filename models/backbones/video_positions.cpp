#include "models/backbones/video_positions.h"

#include <stdexcept>
#include <string>

#include "core/nn/rope.h"

namespace svqa {

at::Tensor video_positions(const Manifest& m, const VisualInput& input, int64_t num_tokens, int64_t start, double fps,
                           int64_t first_temporal_patch) {
  if (m.architecture == Architecture::LlavaOnevision) return text_positions(start, num_tokens);
  if (fps <= 0) throw std::invalid_argument("video positions: fps must be > 0, got " + std::to_string(fps));
  const int64_t merge = m.vision.spatial_merge_size;
  const int64_t t = input.grid_thw[0], h = input.grid_thw[1] / merge, w = input.grid_thw[2] / merge;
  if (t * h * w != num_tokens)
    throw std::invalid_argument("video positions: grid (" + std::to_string(t) + ", " + std::to_string(h) + ", " +
                                std::to_string(w) + ") has " + std::to_string(t * h * w) + " tokens, got " +
                                std::to_string(num_tokens));
  // HF: second_per_grid_t = temporal_patch_size / fps (a float32 tensor), times tokens_per_second.
  if (m.architecture == Architecture::Qwen3_VL) {
    // Each temporal patch is its own group between timestamp texts (HF's get_rope_index splits
    // the grid per patch): t is the group's start, time is carried by the text.
    if (t != 1)
      throw std::invalid_argument("video positions: Qwen3-VL places one temporal patch at a time, got " +
                                  std::to_string(t));
    const auto opts = at::TensorOptions().dtype(at::kLong);
    return at::stack({at::full({h * w}, start, opts), (at::arange(h, opts) + start).view({h, 1}).expand({h, w}).flatten(),
                      (at::arange(w, opts) + start).view({1, w}).expand({h, w}).flatten()});
  }
  const auto seconds_per_grid = at::scalar_tensor(static_cast<double>(m.vision.temporal_patch_size) / fps, at::kFloat);
  const auto interval = seconds_per_grid * static_cast<float>(m.vision.tokens_per_second);
  const auto opts = at::TensorOptions().dtype(at::kLong);
  const auto ti = (at::arange(first_temporal_patch, first_temporal_patch + t, opts) * interval).to(at::kLong) + start;
  const auto hi = at::arange(h, opts) + start, wi = at::arange(w, opts) + start;
  return at::stack({ti.view({t, 1, 1}).expand({t, h, w}).flatten(), hi.view({1, h, 1}).expand({t, h, w}).flatten(),
                    wi.view({1, 1, w}).expand({t, h, w}).flatten()});
}

}  // namespace svqa
