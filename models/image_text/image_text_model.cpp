#include "models/image_text/image_text_model.h"

#include <stdexcept>

#include "models/video/frame_preprocessor.h"
#include "models/loading/torchscript_file.h"

namespace svqa {
namespace {

// Frames per forward of the image tower: bounds activation memory on long streams (SigLIP-so400m
// at 384 px peaks near 1 GB per frame in the traced module on CPU, docs/retrieval.md).
constexpr int64_t kImageBatch = 8;

std::function<std::vector<int64_t>(const std::string&)> text_tokenizer(const ImageTextManifest& m) {
  if (m.text_tokenizer == "clip") {
    auto clip = std::make_shared<ClipTextTokenizer>(m.bpe_file, m.clip_text);
    return [clip](const std::string& text) { return clip->encode(text); };
  }
  auto siglip = std::make_shared<SiglipTextTokenizer>(m.spiece_file, m.text);
  return [siglip](const std::string& text) { return siglip->encode(text); };
}

}  // namespace

ImageTextModel::ImageTextModel(const std::string& export_dir, at::Device device)
    : manifest_(load_image_text_manifest(export_dir)),
      device_(device),
      dtype_(export_dtype(manifest_.dtype)),
      text_ids_(text_tokenizer(manifest_)),
      image_(load_torchscript_file(manifest_.image_file, device)),
      text_(load_torchscript_file(manifest_.text_file, device)) {}

at::Tensor ImageTextModel::embed_images(const at::Tensor& rgb) {
  if (rgb.scalar_type() != at::kByte || rgb.dim() != 4 || rgb.size(3) != 3)
    throw std::invalid_argument("ImageTextModel::embed_images: expected uint8 frames [N, H, W, 3], got " +
                                std::string(c10::getDtypeNames(rgb.scalar_type()).first) + " " + c10::str(rgb.sizes()));
  at::InferenceMode guard;
  std::vector<at::Tensor> out;
  for (int64_t start = 0; start < rgb.size(0); start += kImageBatch) {
    const auto frames = rgb.narrow(0, start, std::min(kImageBatch, rgb.size(0) - start)).to(device_);
    const auto pixels = preprocess_frames(frames, manifest_.image).pixels.to(dtype_);
    out.push_back(run_torchscript(image_, manifest_.image_file, "forward", {pixels}).toTensor().to(at::kFloat));
  }
  if (out.empty()) return at::empty({0, manifest_.embedding_dim}, at::TensorOptions().device(device_));
  return at::cat(out);
}

at::Tensor ImageTextModel::embed_text(const std::string& text) {
  at::InferenceMode guard;
  const auto ids = text_ids(text);
  const auto input = at::tensor(ids, at::kLong).view({1, -1}).to(device_);
  return run_torchscript(text_, manifest_.text_file, "forward", {input}).toTensor().to(at::kFloat).view({-1});
}

}  // namespace svqa
