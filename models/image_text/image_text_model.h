#pragma once
// An image-text model (SigLIP, CLIP or PE-Core) exported by `python -m models.export.image_text`:
// frames and texts to L2-normalised embeddings in one space, so a dot product is their cosine.

#include <ATen/ATen.h>
#include <torch/script.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/image_text/image_text_manifest.h"
#include "models/tokenizers/siglip_text_tokenizer.h"

namespace svqa {

class ImageTextModel {
 public:
  // Loads DIR onto `device`. Throws std::runtime_error, one line naming the file and key, for a
  // missing directory or file, an unknown format_version or architecture, or an unloadable module.
  explicit ImageTextModel(const std::string& export_dir, at::Device device = at::kCPU);

  // uint8 [N, H, W, 3] RGB frames → float32 [N, D] on the model's device, unit rows. Frames are
  // preprocessed as the manifest's image spec says (SigLIP, PE-Core: resize to the model's square;
  // CLIP: shortest edge, centre crop).
  at::Tensor embed_images(const at::Tensor& rgb);
  // The question → float32 [D] on the model's device, unit norm.
  at::Tensor embed_text(const std::string& text);
  // The ids embed_text feeds the text tower (max_length of them, padded).
  std::vector<int64_t> text_ids(const std::string& text) const { return text_ids_(text); }

  const ImageTextManifest& manifest() const { return manifest_; }
  at::Device device() const { return device_; }

 private:
  ImageTextManifest manifest_;
  at::Device device_;
  at::ScalarType dtype_;
  std::function<std::vector<int64_t>(const std::string&)> text_ids_;
  torch::jit::Module image_, text_;
};

}  // namespace svqa
