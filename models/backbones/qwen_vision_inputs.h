#pragma once
// What Qwen2.5-VL's vision blocks need besides pixels, computed in C++ because HF computes it with
// Python loops over the grid (untraceable): 2-D rotary tables, the window reordering, and the
// block-diagonal masks for full and window attention. One temporal patch at a time.

#include <ATen/ATen.h>

#include <cstdint>
#include <utility>

namespace svqa {

struct QwenVisionSpec {
  int64_t patch_size = 14, merge_size = 2, window_size = 112, head_dim = 80;
  double rope_theta = 10000.0;
};

struct QwenVisionInputs {
  at::Tensor cos, sin;        // [N, head_dim] float32, in window order
  at::Tensor window_index;    // [N / m²] int64: merged cell order used inside the blocks
  at::Tensor reverse_index;   // [N / m²] int64: argsort(window_index)
  at::Tensor full_mask;       // [N, N] float32 additive (0 / -inf)
  at::Tensor window_mask;     // [N, N] float32 additive, block-diagonal per window
};

// Patch (h, w) coordinates [N] int64 each, in merge-block order: cell by cell, m×m patches inside
// each (the processor's patch order). Throws when the grid is not a multiple of merge_size.
std::pair<at::Tensor, at::Tensor> vision_patch_coordinates(int64_t grid_h, int64_t grid_w, int64_t merge_size);

// Axial 2-D rotary angles [N, head_dim] float32: slots [0, d/4) from h, [d/4, d/2) from w, the
// whole duplicated (HF's recomposition; the same in Qwen2.5-VL and Qwen3-VL).
at::Tensor vision_axial_rotary(const at::Tensor& hpos, const at::Tensor& wpos, int64_t head_dim, double theta);

// grid_h, grid_w in patches (multiples of merge_size), one temporal patch (N = grid_h * grid_w).
QwenVisionInputs qwen_vision_inputs(int64_t grid_h, int64_t grid_w, const QwenVisionSpec& spec);

}  // namespace svqa
