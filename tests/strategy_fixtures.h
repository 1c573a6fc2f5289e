#pragma once
// Test fixtures for strategy authors: a backbone stub for strategies that never run the model, the
// tiny SigLIP export the CTest fixture `export_tiny_siglip` makes, and frame blocks for a bank.

#include <ATen/ATen.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/memory/kv_block.h"
#include "models/backbone.h"
#include "models/image_text_model.h"

namespace svqa::test {

// begin_question takes a backbone; strategies that only read the bank and their own index never use it.
class NoBackbone final : public Backbone {
 public:
  const Manifest& manifest() const override { return manifest_; }
  const Tokenizer& tokenizer() const override { throw std::logic_error("unused"); }
  at::Device device() const override { return at::kCPU; }
  at::ScalarType dtype() const override { return at::kFloat; }
  at::Tensor encode_frames(const VisualInput&) override { throw std::logic_error("unused"); }
  std::optional<at::Tensor> video_newline() const override { return std::nullopt; }
  at::Tensor embed(const at::Tensor&) override { throw std::logic_error("unused"); }
  LayerQkv layer_qkv(int64_t, const at::Tensor&) override { throw std::logic_error("unused"); }
  at::Tensor layer_out(int64_t, const at::Tensor&, const at::Tensor&) override { throw std::logic_error("unused"); }
  at::Tensor logits(const at::Tensor&) override { throw std::logic_error("unused"); }

 private:
  Manifest manifest_;
};

#ifdef SVQA_TINY_SIGLIP
// The tiny random SigLIP (tests tagged [tiny_siglip]), loaded once.
inline std::shared_ptr<ImageTextModel> tiny_siglip() {
  static std::shared_ptr<ImageTextModel> model = [] {
    if (!std::filesystem::exists(std::string(SVQA_TINY_SIGLIP) + "/manifest.json"))
      throw std::runtime_error(std::string(SVQA_TINY_SIGLIP) +
                               ": no export; run these tests through ctest (fixture export_tiny_siglip) or "
                               "`.venv/bin/python -m models.export.image_text --tiny siglip --out " SVQA_TINY_SIGLIP "`");
    return std::make_shared<ImageTextModel>(SVQA_TINY_SIGLIP);
  }();
  return model;
}
#endif

// A block of frames [first, last] with one zero token in each of `layers` layers (kv_heads 1, d 2)
// and no representative: for strategies that map frames to blocks.
inline KvBlock block_of_frames(int64_t layers, int64_t first, int64_t last, Granularity g = Granularity::Frame) {
  KvBlock b;
  b.granularity = g;
  b.first_frame = first;
  b.last_frame = last;
  b.positions = at::zeros({3, 1}, at::kLong);
  for (int64_t l = 0; l < layers; ++l) {
    b.keys.push_back(at::zeros({1, 1, 2}));
    b.values.push_back(at::zeros({1, 1, 2}));
  }
  return b;
}

}  // namespace svqa::test
