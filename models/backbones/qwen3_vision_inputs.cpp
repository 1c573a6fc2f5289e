#include "models/backbones/qwen3_vision_inputs.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "models/backbones/qwen_vision_inputs.h"

namespace svqa {
namespace {

// One axis of vision_utils._interpolation_axis_taps_weights (bilinear, align_corners, border):
// target index → 2 source taps and weights, in float32 like HF.
std::pair<at::Tensor, at::Tensor> axis_taps(const at::Tensor& index, int64_t size, int64_t side) {
  const auto src = index.to(at::kFloat) * static_cast<float>(side - 1) / static_cast<float>(std::max<int64_t>(size - 1, 1));
  const auto floor = src.floor();
  const auto offsets = at::arange(0, 2, at::kLong);
  const auto taps = (floor.to(at::kLong).unsqueeze(1) + offsets).clamp(0, side - 1);
  const auto distance = (src.unsqueeze(1) - floor.unsqueeze(1) - offsets).abs();
  return {taps, (1 - distance).clamp_min(0)};
}

}  // namespace

Qwen3VisionInputs qwen3_vision_inputs(int64_t grid_h, int64_t grid_w, const Qwen3VisionSpec& spec) {
  const int64_t m = spec.merge_size;
  const auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(spec.num_position_embeddings))));
  if (side * side != spec.num_position_embeddings)
    throw std::invalid_argument("qwen3 vision: num_position_embeddings " + std::to_string(spec.num_position_embeddings) +
                                " is not a square");
  const auto [hpos, wpos] = vision_patch_coordinates(grid_h, grid_w, m);
  const auto emb = vision_axial_rotary(hpos, wpos, spec.head_dim, spec.rope_theta);
  const auto [h_taps, h_weights] = axis_taps(hpos, grid_h, side);
  const auto [w_taps, w_weights] = axis_taps(wpos, grid_w, side);
  Qwen3VisionInputs in;
  in.cos = emb.cos();
  in.sin = emb.sin();
  in.interp_index = (h_taps.unsqueeze(2) * side + w_taps.unsqueeze(1)).reshape({-1, 4});
  in.interp_weight = (h_weights.unsqueeze(2) * w_weights.unsqueeze(1)).reshape({-1, 4});
  return in;
}

}  // namespace svqa
