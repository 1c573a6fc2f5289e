#include "models/backbones/torchscript_vision_layers.h"

#include <stdexcept>

#include "models/loading/torchscript_file.h"

namespace svqa {

TorchScriptVisionLayers::TorchScriptVisionLayers(const torch::jit::Module& vision, const Manifest& manifest,
                                                 at::Device device, at::ScalarType dtype)
    : vision_(vision), file_(manifest.vision_file), device_(device), dtype_(dtype), heads_(manifest.vision.num_heads) {
  static const char* const kNames[kPieces] = {"norm1", "q", "k", "v", "out", "mlp"};
  for (int64_t i = 0; i < manifest.vision.layers; ++i) {
    names_.emplace_back();
    for (const char* piece : kNames) names_.back().push_back("layer" + std::to_string(i) + "_" + piece);
  }
}

at::Tensor TorchScriptVisionLayers::embed(const at::Tensor& pixels) {
  return run_torchscript(vision_, file_, "embed", {pixels.to(device_, dtype_)}).toTensor();
}

at::Tensor TorchScriptVisionLayers::head(const at::Tensor& h) {
  return run_torchscript(vision_, file_, "head", {h}).toTensor();
}

at::Tensor TorchScriptVisionLayers::run(int64_t layer, Piece piece, const at::Tensor& x) {
  if (layer < 0 || layer >= num_layers())
    throw std::out_of_range("backbone: vision layer " + std::to_string(layer) + " of " + std::to_string(num_layers()));
  return run_torchscript(vision_, file_, names_[static_cast<size_t>(layer)][piece], {x}).toTensor();
}

}  // namespace svqa
