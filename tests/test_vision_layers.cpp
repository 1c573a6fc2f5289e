// The vision tower layer by layer (models/backbones/vision_layers.h) against the whole tower on the
// tiny exports: LLaVA-OneVision's SigLIP at 9 and 196 tokens a frame gives the same tokens both ways
// (the exporter checks the traced pieces, composed the same way, against Hugging Face's forward).

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <string>

#include "models/backbones/torchscript_backbone.h"
#include "models/backbones/vision_layers.h"
#include "models/video/frame_preprocessor.h"

#ifndef SVQA_TINY_EXPORTS
#error "SVQA_TINY_EXPORTS must name the directory the CTest fixture exports tiny backbones to"
#endif

namespace svqa {

TEST_CASE("vision tower: layer by layer equals the whole tower", "[vision_layers][tiny_backbone]") {
  const std::string arch = GENERATE(std::string("llava_onevision"), std::string("llava_onevision_196"));
  TorchScriptBackbone backbone(std::string(SVQA_TINY_EXPORTS) + "/" + arch, at::kCPU);
  VisionLayers* tower = backbone.vision_layers();
  REQUIRE(tower != nullptr);
  REQUIRE(tower->num_layers() > 0);
  at::manual_seed(3);
  const auto& image = backbone.manifest().image;
  const at::Tensor rgb = at::randint(0, 256, {3, image.height, image.width, 3}, at::kByte);
  const VisualInput input = preprocess_frames(rgb, image);
  const at::Tensor whole = backbone.encode_frames(input);
  const at::Tensor layered = encode_layer_by_layer(*tower, input.pixels);
  REQUIRE(layered.sizes() == whole.sizes());
  CHECK((layered - whole).abs().max().item<double>() <= 1e-5 * std::max(1.0, whole.abs().max().item<double>()));
}

}  // namespace svqa
