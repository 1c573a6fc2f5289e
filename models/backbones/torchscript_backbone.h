#pragma once
// Backbone over the TorchScript pieces written by models/export.

#include <torch/script.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "models/backbones/backbone.h"
#include "models/backbones/torchscript_vision_layers.h"
#include "models/backbones/video_resize.h"

namespace svqa {

struct TorchScriptOptions {
  std::string export_dir;
  VideoResizeOptions video_resize;
  static void declare(Schema<TorchScriptOptions>& s) {
    s.field("export", &TorchScriptOptions::export_dir, "export directory written by python -m models.export")
        .required().must_exist("directory");
    s.field("video_resize", &TorchScriptOptions::video_resize,
            "the size a Qwen export's frames are resized to: the processor's rule and bounds, or qwen-vl-utils' "
            "(docs/video_input.md, \"Each reference's sampling and resolution\")");
  }
};

class TorchScriptBackbone final : public Backbone {
 public:
  // Loads DIR/manifest.json and every file it lists onto `device`, in `dtype` (default: the
  // export's); frames are sized as the manifest's "image" object with `video_resize` applied (checked
  // before any weights load). Errors name the missing file.
  TorchScriptBackbone(const std::string& export_dir, at::Device device, std::optional<at::ScalarType> dtype = {},
                      const VideoResizeOptions& video_resize = {});

  const Manifest& manifest() const override { return manifest_; }
  const Tokenizer& tokenizer() const override { return *tokenizer_; }
  at::Device device() const override { return device_; }
  at::ScalarType dtype() const override { return dtype_; }

  at::Tensor encode_frames(const VisualInput& input) override;
  VisualFeatures encode_visual(const VisualInput& input) override;
  int64_t frames_per_vision_call() const override;
  VisionLayers* vision_layers() override { return vision_layers_.get(); }
  std::optional<at::Tensor> video_newline() const override;
  at::Tensor embed(const at::Tensor& ids) override;
  LayerQkv layer_qkv(int64_t layer, const at::Tensor& h) override;
  at::Tensor layer_out(int64_t layer, const at::Tensor& h, const at::Tensor& attn) override;
  at::Tensor logits(const at::Tensor& h) override;

  // Parameters by name of the vision tower and of decoder layer `i` (the speed harness reads their shapes).
  std::map<std::string, at::Tensor> vision_weights() const { return parameters_of(vision_); }
  std::map<std::string, at::Tensor> text_weights() const { return parameters_of(text_); }
  std::map<std::string, at::Tensor> layer_weights(int64_t i) const { return parameters_of(layers_.at(static_cast<size_t>(i))); }

 private:
  static std::map<std::string, at::Tensor> parameters_of(const torch::jit::Module& module);
  at::Tensor encode_llava(const at::Tensor& pixels);
  at::Tensor encode_qwen(const VisualInput& input);
  VisualFeatures encode_qwen3(const VisualInput& input);
  torch::jit::Module& layer(int64_t i);

  Manifest manifest_;
  at::Device device_;
  at::ScalarType dtype_;
  std::unique_ptr<Tokenizer> tokenizer_;
  torch::jit::Module text_, vision_;
  std::vector<torch::jit::Module> layers_;
  std::unique_ptr<TorchScriptVisionLayers> vision_layers_;  // manifest vision.layers > 0
};

}  // namespace svqa
