#pragma once
// A Video-LLM cut into the pieces strategies compose: vision, embeddings, per-layer q/k/v and
// output, logits. Attention, positions and the KV cache are not here: callers own them.

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>

#include "models/backbones/vision_layers.h"
#include "models/video/image_spec.h"
#include "models/loading/manifest.h"
#include "models/tokenizers/tokenizer.h"

namespace svqa {

struct LayerQkv {
  at::Tensor q;  // [T, heads, head_dim], not rotated
  at::Tensor k;  // [T, kv_heads, head_dim], not rotated
  at::Tensor v;  // [T, kv_heads, head_dim]
};

// Visual tokens with Qwen3-VL's DeepStack features.
struct VisualFeatures {
  at::Tensor tokens;     // [n, hidden], as encode_frames
  at::Tensor deepstack;  // [K, n, hidden], added after LLM layers 0..K-1 (models/backbones/deepstack.h); undefined: none
};

class Backbone {
 public:
  virtual ~Backbone() = default;

  virtual const Manifest& manifest() const = 0;
  virtual const Tokenizer& tokenizer() const = 0;
  virtual at::Device device() const = 0;
  virtual at::ScalarType dtype() const = 0;

  // Visual tokens [n, hidden] in sequence order. LLaVA-OV: tokens_per_frame per frame, frame by
  // frame. Qwen2.5-VL, Qwen3-VL: (t, h/m, w/m) merged cells, row-major per temporal patch.
  virtual at::Tensor encode_frames(const VisualInput& input) = 0;
  // The same with DeepStack features (Qwen3-VL); other backbones have none.
  virtual VisualFeatures encode_visual(const VisualInput& input) { return {encode_frames(input), {}}; }
  // Frames the vision tower takes per call, so that callers preprocess no more frames at once: a
  // call's memory then stays one call's whatever the frames given. 0: all at once.
  virtual int64_t frames_per_vision_call() const { return 0; }
  // The vision tower layer by layer (vision_layers.h), for methods that recompute only some tokens per
  // layer (STC); nullptr where the export has none (Qwen's towers, LLaVA-OV exports from before it).
  virtual VisionLayers* vision_layers() { return nullptr; }
  // LLaVA-OV's `image_newline`, which HF appends once after a video; nullopt when the model has none.
  virtual std::optional<at::Tensor> video_newline() const = 0;

  virtual at::Tensor embed(const at::Tensor& ids) = 0;  // [T] int64 → [T, hidden]
  virtual LayerQkv layer_qkv(int64_t layer, const at::Tensor& h) = 0;  // h [T, hidden]
  // h: the layer's input [T, hidden]; attn: attention output [T, heads * head_dim] → the layer's output.
  virtual at::Tensor layer_out(int64_t layer, const at::Tensor& h, const at::Tensor& attn) = 0;
  virtual at::Tensor logits(const at::Tensor& h) = 0;  // [T, hidden] → [T, vocab] (final norm + lm_head)

  int64_t num_layers() const { return manifest().text.num_layers; }
};

}  // namespace svqa
