#pragma once
// manifest.json of an export (models/export): dimensions, token ids, prompt, preprocessing, files.

#include <cstdint>
#include <string>
#include <vector>

#include "models/video/image_spec.h"

namespace svqa {

inline constexpr int kExportFormatVersion = 1;

enum class Architecture { LlavaOnevision, Qwen2_5_VL, Qwen3_VL };

struct TextSpec {
  int64_t hidden_size = 0, num_layers = 0, num_heads = 0, num_kv_heads = 0, head_dim = 0, vocab_size = 0;
  double rope_theta = 0, rms_norm_eps = 0;
  std::vector<int64_t> mrope_section;  // Qwen2.5-VL, Qwen3-VL
  bool mrope_interleaved = false;      // Qwen3-VL: t/h/w frequency slots interleaved, not in blocks
};

struct VisionSpec {
  // LLaVA-OneVision
  int64_t tokens_per_frame = 0;
  bool video_newline = false;  // HF appends one `image_newline` embedding after a video
  // The tower layer by layer (vision.pt's layer{i}_* methods): the layers the features read, and
  // num_heads below their heads; 0: an export without them.
  int64_t layers = 0;
  // Qwen2.5-VL and Qwen3-VL (window_size, tokens_per_second: Qwen2.5-VL only; num_heads: LLaVA-OV too)
  int64_t patch_size = 0, spatial_merge_size = 1, temporal_patch_size = 1, window_size = 0;
  int64_t num_heads = 0, head_dim = 0;
  double rope_theta = 10000.0, tokens_per_second = 0;
  // Qwen3-VL: learned position grid (a square of this many entries) and DeepStack feature count
  // (ViT features added to the hidden states after LLM layers 0 .. deepstack_layers-1)
  int64_t num_position_embeddings = 0, deepstack_layers = 0;
};

struct Manifest {
  std::string dir;  // the export directory
  Architecture architecture = Architecture::LlavaOnevision;
  std::string architecture_name, source, dtype;
  TextSpec text;
  VisionSpec vision;
  ImageSpec image;
  std::vector<int64_t> eos_ids;
  std::string video_prompt;  // chat template with {video} and {question}
  // Qwen3-VL: one temporal patch with its timestamp, {seconds} (one decimal) and {frame}; empty: none
  std::string frame_prompt;
  std::string tokenizer_file, text_file, vision_file;  // absolute paths
  std::vector<std::string> layer_files;

  // DIR/rel, checked to exist; errors name the manifest key that listed it.
  std::string path(const std::string& rel, const std::string& key) const;
};

// Qwen2.5-VL and Qwen3-VL: frames go in as temporal patches of patches (not whole frames).
inline bool uses_temporal_patches(const Manifest& m) { return m.architecture != Architecture::LlavaOnevision; }

// Reads DIR/manifest.json and checks every listed file exists. Errors name the file and key.
Manifest load_manifest(const std::string& dir);

}  // namespace svqa
