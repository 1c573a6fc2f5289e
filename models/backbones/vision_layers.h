#pragma once
// The vision tower cut layer by layer, for methods that recompute only some of a frame's tokens in
// each layer (STC-Cacher, strategies/encoding/stc). A pre-LN ViT layer (SigLIP) is
//   x = norm1(h);  h += out(attention(q(x), k(x), v(x)));  h += mlp(h)   (mlp: layer_norm2 + MLP)
// and every piece but attention works row by row, so it can run on any subset of a frame's tokens.
// Tensors are [F, n, D]: F frames, each attending only to its own tokens.

#include <ATen/ATen.h>

#include <cstdint>

namespace svqa {

class VisionLayers {
 public:
  virtual ~VisionLayers() = default;
  virtual int64_t num_layers() const = 0;  // the layers the features read (to the export's feature layer)
  virtual int64_t num_heads() const = 0;
  virtual at::Tensor embed(const at::Tensor& pixels) = 0;  // preprocessed [F, 3, S, S] → h [F, N, D]
  virtual at::Tensor norm1(int64_t layer, const at::Tensor& h) = 0;
  virtual at::Tensor q(int64_t layer, const at::Tensor& x) = 0;
  virtual at::Tensor k(int64_t layer, const at::Tensor& x) = 0;
  virtual at::Tensor v(int64_t layer, const at::Tensor& x) = 0;
  virtual at::Tensor out(int64_t layer, const at::Tensor& attn) = 0;  // the attention's output projection
  virtual at::Tensor mlp(int64_t layer, const at::Tensor& h) = 0;     // layer_norm2 + MLP (without the residual)
  // The last layer's output [F, N, D] → visual tokens [F, P, hidden] (LLaVA-OV: projector + pooling).
  virtual at::Tensor head(const at::Tensor& h) = 0;
};

// Softmax attention of q [F, n, D] over k, v [F, N, D] in `heads` heads, no mask, scale d^-½ → [F, n, D].
at::Tensor vision_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t heads);

// The whole tower layer by layer: tokens [F·P, hidden], as Backbone::encode_frames gives them.
at::Tensor encode_layer_by_layer(VisionLayers& tower, const at::Tensor& pixels);

}  // namespace svqa
