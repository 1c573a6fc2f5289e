#pragma once
// VisionLayers over an export's vision.pt: the methods models/export traces beside `forward`
// (embed, layer{i}_norm1/q/k/v/out/mlp, head; LLaVA-OneVision, manifest vision.layers > 0).

#include <torch/script.h>

#include <string>
#include <vector>

#include "models/backbones/vision_layers.h"
#include "models/loading/manifest.h"

namespace svqa {

class TorchScriptVisionLayers final : public VisionLayers {
 public:
  // `vision`: the loaded vision.pt (a handle: its weights are shared); pixels go to `device`, `dtype`.
  TorchScriptVisionLayers(const torch::jit::Module& vision, const Manifest& manifest, at::Device device, at::ScalarType dtype);

  int64_t num_layers() const override { return static_cast<int64_t>(names_.size()); }
  int64_t num_heads() const override { return heads_; }
  at::Tensor embed(const at::Tensor& pixels) override;
  at::Tensor norm1(int64_t layer, const at::Tensor& h) override { return run(layer, kNorm1, h); }
  at::Tensor q(int64_t layer, const at::Tensor& x) override { return run(layer, kQ, x); }
  at::Tensor k(int64_t layer, const at::Tensor& x) override { return run(layer, kK, x); }
  at::Tensor v(int64_t layer, const at::Tensor& x) override { return run(layer, kV, x); }
  at::Tensor out(int64_t layer, const at::Tensor& attn) override { return run(layer, kOut, attn); }
  at::Tensor mlp(int64_t layer, const at::Tensor& h) override { return run(layer, kMlp, h); }
  at::Tensor head(const at::Tensor& h) override;

 private:
  enum Piece { kNorm1, kQ, kK, kV, kOut, kMlp, kPieces };
  at::Tensor run(int64_t layer, Piece piece, const at::Tensor& x);

  torch::jit::Module vision_;
  std::string file_;
  at::Device device_;
  at::ScalarType dtype_;
  int64_t heads_;
  std::vector<std::vector<std::string>> names_;  // [layer][piece]: the traced method's name
};

}  // namespace svqa
