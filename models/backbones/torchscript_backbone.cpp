#include "models/backbones/torchscript_backbone.h"

#include <stdexcept>
#include <string>

#include "core/nn/large_allocations.h"
#include "models/loading/export_weights.h"
#include "models/backbones/qwen3_vision_inputs.h"
#include "models/backbones/qwen_vision_inputs.h"
#include "models/loading/torchscript_file.h"

namespace svqa {
namespace {

std::string shape_of(const at::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

void check_patches(const VisualInput& input, const VisionSpec& v) {
  const auto [t, h, w] = input.grid_thw;
  const int64_t row = 3 * v.temporal_patch_size * v.patch_size * v.patch_size;
  if (input.pixels.dim() != 2 || input.pixels.size(0) != t * h * w || input.pixels.size(1) != row)
    throw std::invalid_argument("backbone: frame size mismatch: pixels " + shape_of(input.pixels) + " for grid (" +
                                std::to_string(t) + ", " + std::to_string(h) + ", " + std::to_string(w) +
                                "), this export expects [t*h*w, " + std::to_string(row) + "]");
}

// Frames per LLaVA vision call. The activations a call holds grow with its frames, and on the CPU a
// frame's 729 patches already fill the matmuls, so frames go one at a time there (memory per frame
// independent of how many arrive at once); a GPU needs the batch to be busy.
int64_t llava_frames_per_call(at::Device device) { return device.is_cpu() ? 1 : 16; }

}  // namespace

TorchScriptBackbone::TorchScriptBackbone(const std::string& export_dir, at::Device device,
                                         std::optional<at::ScalarType> dtype, const VideoResizeOptions& video_resize)
    : manifest_(load_manifest(export_dir)), device_(device), dtype_(dtype.value_or(export_dtype(manifest_.dtype))) {
  manifest_.image = with_video_resize(manifest_.image, video_resize, export_dir + "/manifest.json");
  // A trace fixes its casts to the dtype it was traced in (RMSNorm's cast back to the input dtype),
  // so converting a float32 export's modules to bfloat16 fails inside the first layer; refuse at once.
  if (dtype_ != export_dtype(manifest_.dtype))
    throw std::runtime_error(export_dir + "/manifest.json: the export was traced in " + manifest_.dtype +
                             ", but runtime.dtype is " + dtype_name(dtype_) +
                             ": export again with --dtype " + dtype_name(dtype_) + " (or set runtime.dtype: " +
                             manifest_.dtype + ")");
  map_large_allocations();  // a call's activations returned to the system once freed
  tokenizer_ = load_tokenizer(manifest_.tokenizer_file);
  text_ = load_torchscript_file(manifest_.text_file, device);
  vision_ = load_torchscript_file(manifest_.vision_file, device);
  layers_.reserve(manifest_.layer_files.size());
  for (const auto& f : manifest_.layer_files) layers_.push_back(load_torchscript_file(f, device));
  check_export_weights(manifest_, text_, vision_, layers_, *tokenizer_);
  if (manifest_.vision.layers > 0)
    vision_layers_ = std::make_unique<TorchScriptVisionLayers>(vision_, manifest_, device_, dtype_);
}

std::map<std::string, at::Tensor> TorchScriptBackbone::parameters_of(const torch::jit::Module& module) {
  std::map<std::string, at::Tensor> out;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) out.emplace(p.name, p.value);
  return out;
}

torch::jit::Module& TorchScriptBackbone::layer(int64_t i) {
  if (i < 0 || i >= static_cast<int64_t>(layers_.size()))
    throw std::out_of_range("backbone: layer " + std::to_string(i) + " of " + std::to_string(layers_.size()));
  return layers_[static_cast<size_t>(i)];
}

at::Tensor TorchScriptBackbone::embed(const at::Tensor& ids) {
  return run_torchscript(text_, manifest_.text_file, "embed", {ids.to(device_).unsqueeze(0)}).toTensor().squeeze(0);
}

LayerQkv TorchScriptBackbone::layer_qkv(int64_t i, const at::Tensor& h) {
  const auto out = run_torchscript(layer(i), manifest_.layer_files[static_cast<size_t>(i)], "qkv", {h.unsqueeze(0)}).toTuple();
  const auto& t = manifest_.text;
  const int64_t T = h.size(0);
  return {out->elements()[0].toTensor().view({T, t.num_heads, t.head_dim}),
          out->elements()[1].toTensor().view({T, t.num_kv_heads, t.head_dim}),
          out->elements()[2].toTensor().view({T, t.num_kv_heads, t.head_dim})};
}

at::Tensor TorchScriptBackbone::layer_out(int64_t i, const at::Tensor& h, const at::Tensor& attn) {
  return run_torchscript(layer(i), manifest_.layer_files[static_cast<size_t>(i)], "forward", {h.unsqueeze(0), attn.unsqueeze(0)})
      .toTensor()
      .squeeze(0);
}

at::Tensor TorchScriptBackbone::logits(const at::Tensor& h) {
  return run_torchscript(text_, manifest_.text_file, "forward", {h.unsqueeze(0)}).toTensor().squeeze(0);
}

std::optional<at::Tensor> TorchScriptBackbone::video_newline() const {
  if (!manifest_.vision.video_newline) return std::nullopt;
  return vision_.attr("image_newline").toTensor().unsqueeze(0);
}

at::Tensor TorchScriptBackbone::encode_frames(const VisualInput& input) { return encode_visual(input).tokens; }

VisualFeatures TorchScriptBackbone::encode_visual(const VisualInput& input) {
  if (!input.pixels.defined()) throw std::invalid_argument("backbone: no pixels given");
  switch (manifest_.architecture) {
    case Architecture::LlavaOnevision: return {encode_llava(input.pixels), {}};
    case Architecture::Qwen2_5_VL: return {encode_qwen(input), {}};
    case Architecture::Qwen3_VL: break;
  }
  return encode_qwen3(input);
}

int64_t TorchScriptBackbone::frames_per_vision_call() const {
  // Qwen: one temporal patch per call (encode_qwen, encode_qwen3).
  return manifest_.architecture == Architecture::LlavaOnevision ? llava_frames_per_call(device_)
                                                                 : manifest_.vision.temporal_patch_size;
}

at::Tensor TorchScriptBackbone::encode_llava(const at::Tensor& pixels) {
  const auto& img = manifest_.image;
  if (pixels.dim() != 4 || pixels.size(1) != 3 || pixels.size(2) != img.height || pixels.size(3) != img.width)
    throw std::invalid_argument("backbone: frame size mismatch: pixels " + shape_of(pixels) + ", this export expects [F, 3, " +
                                std::to_string(img.height) + ", " + std::to_string(img.width) + "]");
  std::vector<at::Tensor> tokens;
  const int64_t per_call = llava_frames_per_call(device_);
  for (int64_t f = 0; f < pixels.size(0); f += per_call) {
    const auto batch = pixels.narrow(0, f, std::min(per_call, pixels.size(0) - f)).to(device_, dtype_);
    tokens.push_back(run_torchscript(vision_, manifest_.vision_file, "forward", {batch}).toTensor());
  }
  const auto out = at::cat(tokens, 0);  // [F, P, hidden]
  return out.reshape({-1, out.size(2)});
}

at::Tensor TorchScriptBackbone::encode_qwen(const VisualInput& input) {
  const auto& v = manifest_.vision;
  check_patches(input, v);
  const auto [t, h, w] = input.grid_thw;
  const auto in = qwen_vision_inputs(h, w, {v.patch_size, v.spatial_merge_size, v.window_size, v.head_dim, v.rope_theta});
  const auto on = [&](const at::Tensor& x) { return x.to(device_, x.is_floating_point() ? dtype_ : x.scalar_type()); };
  std::vector<at::Tensor> tokens;
  // cos/sin stay float32: HF rotates vision q/k in float32 whatever the model dtype.
  // One temporal patch per call: full attention never crosses temporal patches, so this is exact.
  for (int64_t i = 0; i < t; ++i) {
    const auto patches = input.pixels.narrow(0, i * h * w, h * w);
    tokens.push_back(run_torchscript(vision_, manifest_.vision_file, "forward",
                                     {on(patches), in.cos.to(device_), in.sin.to(device_), on(in.window_index),
                                      on(in.reverse_index), on(in.full_mask), on(in.window_mask)})
                         .toTensor());
  }
  return at::cat(tokens, 0);
}

VisualFeatures TorchScriptBackbone::encode_qwen3(const VisualInput& input) {
  const auto& v = manifest_.vision;
  check_patches(input, v);
  const auto [t, h, w] = input.grid_thw;
  const auto in = qwen3_vision_inputs(h, w, {v.spatial_merge_size, v.head_dim, v.num_position_embeddings, v.rope_theta});
  std::vector<at::Tensor> tokens, deepstack;
  // One temporal patch per call: HF's attention never crosses temporal patches (cu_seqlens).
  for (int64_t i = 0; i < t; ++i) {
    const auto patches = input.pixels.narrow(0, i * h * w, h * w).to(device_, dtype_);
    const auto out = run_torchscript(vision_, manifest_.vision_file, "forward",
                                     {patches, in.cos.to(device_), in.sin.to(device_), in.interp_index.to(device_),
                                      in.interp_weight.to(device_)})
                         .toTuple();
    tokens.push_back(out->elements()[0].toTensor());
    deepstack.push_back(out->elements()[1].toTensor());
  }
  return {at::cat(tokens, 0), at::cat(deepstack, 1)};
}

}  // namespace svqa
