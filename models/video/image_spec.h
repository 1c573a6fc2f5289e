#pragma once
// How a backbone wants its frames: resize rule, normalisation, patch layout (from the export manifest).

#include <ATen/ATen.h>

#include <array>
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace svqa {

struct ImageSpec {
  enum class Resize {
    Fixed,             // LLaVA-OneVision, SigLIP, PE-Core: every frame to height × width
    QwenSmart,         // Qwen2.5-VL: smart_resize to multiples of `factor` within [min_pixels, max_pixels]
    Qwen3Smart,        // Qwen3-VL: the same, with the pixel limits counting every frame of the clip
    ShortestEdgeCrop,  // CLIP: shortest edge to `shortest_edge` (aspect kept), then a centred height × width crop
  };
  enum class Interpolation { Bicubic, Bilinear };  // both antialiased, as torchvision's resize
  Resize resize = Resize::Fixed;
  Interpolation interpolation = Interpolation::Bicubic;
  int64_t height = 0, width = 0;          // Fixed; ShortestEdgeCrop: the crop
  int64_t shortest_edge = 0;              // ShortestEdgeCrop
  int64_t factor = 28;                    // QwenSmart: patch_size * merge_size
  int64_t min_pixels = 0, max_pixels = 0; // QwenSmart
  int64_t patch_size = 14;
  int64_t merge_size = 1;
  int64_t temporal_patch_size = 1;        // Qwen2.5-VL: 2 frames form one temporal patch
  double rescale_factor = 1.0 / 255.0;
  std::array<double, 3> mean{0.5, 0.5, 0.5};
  std::array<double, 3> std{0.5, 0.5, 0.5};
};

// What the vision module consumes.
//   Fixed:     pixels float [F, 3, height, width]; grid_thw unused (0s).
//   QwenSmart, Qwen3Smart: pixels float [t*h*w, 3*temporal_patch_size*patch_size*patch_size] in the HF
//              processor's order (2×2 merge order), grid_thw = {t, h, w} in patches.
struct VisualInput {
  at::Tensor pixels;
  std::array<int64_t, 3> grid_thw{0, 0, 0};
};

// Reads the manifest's "image" object; errors name `where` (file) and the field.
ImageSpec image_spec_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace svqa
