#pragma once
// How a backbone wants its frames: resize rule, normalisation, patch layout (from the export manifest).

#include <ATen/ATen.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace svqa {

// qwen-vl-utils' fetch_video pixel bounds (vision_process.py), which a Qwen reference applies to a clip's
// frames before the processor sees them; each 0: the reference's default.
struct QwenVideoPixels {
  int64_t factor = 28;           // patch_size · spatial merge size: 28 (Qwen2.5-VL), 32 (Qwen3-VL)
  int64_t min_pixels = 0;        // the caller's {"min_pixels": ...}; 0: VIDEO_MIN_TOKEN_NUM (128) · factor²
  int64_t max_pixels = 0;        // the cap VIDEO_MAX_TOKEN_NUM (768) · factor² (not the caller's); 0: that
  double total_pixels = 0;       // the caller's {"total_pixels": ...}; 0: MODEL_SEQ_LEN (128000) · factor² · 0.9
  int64_t asked_max_pixels = 0;  // the caller's {"max_pixels": ...}; 0: none
};

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
  int64_t min_pixels = 0, max_pixels = 0; // QwenSmart, Qwen3Smart: the processor's bounds
  // QwenSmart, Qwen3Smart: frames first sized as qwen-vl-utils' fetch_video sizes a clip
  // (frame_indices.h, qwen_video_frame_size), then by the processor's rule (Qwen2.5-VL) or not again
  // (Qwen3-VL: its model card calls the processor with do_resize=False). Unset: the processor's rule alone.
  std::optional<QwenVideoPixels> qwen_vl_utils;
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
