#include "models/loading/export_weights.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "models/tokenizers/tokenizer.h"
#include "models/loading/torchscript_file.h"

namespace svqa {
namespace {

// One expected dimension: its value and the manifest keys it comes from ("" if none: any size).
struct Dim {
  int64_t value = -1;
  std::string keys;
};

std::string shape_text(at::IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

std::string expected_text(const std::vector<Dim>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + (dims[i].keys.empty() ? "*" : std::to_string(dims[i].value));
  return s + "]";
}

std::map<std::string, at::Tensor> tensors_of(const torch::jit::Module& m) {
  std::map<std::string, at::Tensor> out;
  for (const auto& p : m.named_parameters(/*recurse=*/true)) out.emplace(p.name, p.value);
  for (const auto& b : m.named_buffers(/*recurse=*/true)) out.emplace(b.name, b.value);
  return out;
}

class Checker {
 public:
  explicit Checker(const Manifest& m) : m_(m) {}

  // `file` is the export-relative name ("layers/001.pt"); a tensor that is absent is not checked
  // (lm_head.weight exists only when the embeddings are untied).
  void shape(const std::string& file, const std::map<std::string, at::Tensor>& tensors, const std::string& name,
             const std::vector<Dim>& dims, bool required = true) const {
    const auto it = tensors.find(name);
    if (it == tensors.end()) {
      if (required) fail(file, "has no tensor " + name + " (not an export of " + m_.architecture_name + "?)");
      return;
    }
    const auto sizes = it->second.sizes();
    if (sizes.size() != dims.size())
      fail(file, name + " has shape " + shape_text(sizes) + ", expected " + std::to_string(dims.size()) + " dimensions " +
                     expected_text(dims));
    for (size_t i = 0; i < dims.size(); ++i)
      if (!dims[i].keys.empty() && sizes[i] != dims[i].value)
        fail(file, name + " has shape " + shape_text(sizes) + ", but manifest.json " + dims[i].keys + " = " +
                       std::to_string(dims[i].value) + " expects " + expected_text(dims) + " (a file from another export?)");
  }

  void dtype(const std::string& file, const std::map<std::string, at::Tensor>& tensors) const {
    const at::ScalarType want = export_dtype(m_.dtype);
    for (const auto& [name, t] : tensors)
      if (t.is_floating_point() && t.scalar_type() != want)
        fail(file, name + " is " + std::string(c10::toString(t.scalar_type())) + ", but manifest.json dtype = " +
                       m_.dtype + " (a file from another export?)");
  }

  [[noreturn]] void fail(const std::string& file, const std::string& what) const {
    throw std::runtime_error((std::filesystem::path(m_.dir) / file).string() + ": " + what);
  }

 private:
  const Manifest& m_;
};

std::string relative(const Manifest& m, const std::string& path) {
  return std::filesystem::path(path).lexically_relative(m.dir).string();
}

}  // namespace

namespace {

// The tokenizer's ids and the end-of-sequence ids inside the text's vocabulary.
void check_token_ids(const Checker& c, const Manifest& m, const Tokenizer& tokenizer) {
  const auto& t = m.text;
  if (tokenizer.vocab_size() > t.vocab_size)
    c.fail("tokenizer.json", "has ids up to " + std::to_string(tokenizer.vocab_size() - 1) +
                                 ", but manifest.json text.vocab_size = " + std::to_string(t.vocab_size));
  for (const int64_t eos : m.eos_ids)
    if (eos < 0 || eos >= t.vocab_size)
      c.fail("manifest.json", "tokens.eos " + std::to_string(eos) + " is outside text.vocab_size = " + std::to_string(t.vocab_size));
}

void check_text_weights(const Checker& c, const Manifest& m, const torch::jit::Module& text) {
  const Dim hidden{m.text.hidden_size, "text.hidden_size"}, vocab{m.text.vocab_size, "text.vocab_size"};
  const std::string text_file = relative(m, m.text_file);
  const auto text_tensors = tensors_of(text);
  c.dtype(text_file, text_tensors);
  c.shape(text_file, text_tensors, "embed_tokens.weight", {vocab, hidden});
  c.shape(text_file, text_tensors, "norm.weight", {hidden});
  c.shape(text_file, text_tensors, "lm_head.weight", {vocab, hidden}, /*required=*/false);
}

void check_layer_weights(const Checker& c, const Manifest& m, const std::vector<torch::jit::Module>& layers) {
  const auto& t = m.text;
  const Dim hidden{t.hidden_size, "text.hidden_size"};
  const Dim q_width{t.num_heads * t.head_dim, "text.num_heads × text.head_dim"};
  const Dim kv_width{t.num_kv_heads * t.head_dim, "text.num_kv_heads × text.head_dim"};
  std::map<std::string, at::Tensor> first_layer;
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string file = relative(m, m.layer_files[i]);
    const auto tensors = tensors_of(layers[i]);
    c.dtype(file, tensors);
    c.shape(file, tensors, "input_layernorm.weight", {hidden});
    c.shape(file, tensors, "q_proj.weight", {q_width, hidden});
    c.shape(file, tensors, "k_proj.weight", {kv_width, hidden});
    c.shape(file, tensors, "v_proj.weight", {kv_width, hidden});
    c.shape(file, tensors, "o_proj.weight", {hidden, q_width});
    if (m.architecture == Architecture::Qwen3_VL) {  // QK-norm: one RMSNorm over each head's dims
      c.shape(file, tensors, "q_norm.weight", {Dim{t.head_dim, "text.head_dim"}});
      c.shape(file, tensors, "k_norm.weight", {Dim{t.head_dim, "text.head_dim"}});
    }
    // The MLP width is not in the manifest: every layer must match the first one.
    if (i == 0) first_layer = tensors;
    for (const auto& [name, tensor] : tensors) {
      const auto same = first_layer.find(name);
      if (same == first_layer.end() || !same->second.sizes().equals(tensor.sizes()))
        c.fail(file, name + " has shape " + shape_text(tensor.sizes()) + ", " +
                         (same == first_layer.end() ? std::string("and the first layer has no such tensor")
                                                    : "the first layer's is " + shape_text(same->second.sizes())) +
                         " (manifest.json files.layers[" + std::to_string(i) + "] is from another export?)");
    }
  }
}

// LLaVA-OneVision's SigLIP tower and projector: SigLIP's patch grid fixes the frame size and, pooled
// 2×, the tokens per frame.
void check_siglip_vision(const Checker& c, const Manifest& m, const std::string& vision_file,
                         const std::map<std::string, at::Tensor>& vt) {
  const Dim hidden{m.text.hidden_size, "text.hidden_size"};
  c.shape(vision_file, vt, "image_newline", {hidden});
  c.shape(vision_file, vt, "projector.linear_2.weight", {hidden, {}});
  c.shape(vision_file, vt, "tower.embeddings.patch_embedding.weight", {{}, {3, "(RGB)"}, {}, {}});
  const int64_t patch = vt.at("tower.embeddings.patch_embedding.weight").size(2);
  c.shape(vision_file, vt, "tower.embeddings.position_embedding.weight", {{}, {}});
  const int64_t patches = vt.at("tower.embeddings.position_embedding.weight").size(0);
  const auto grid = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(patches))));
  const int64_t pooled = (grid + 1) / 2;
  // The patch convolution floors: SigLIP at 384 px with 14 px patches sees 27×27 (the last 6 px dropped).
  if (m.image.height / patch != grid || m.image.width / patch != grid)
    c.fail(vision_file, "has a " + std::to_string(grid) + "×" + std::to_string(grid) + " patch grid (" +
                            std::to_string(patches) + " patches of " + std::to_string(patch) +
                            " px), but manifest.json image.height × image.width = " + std::to_string(m.image.height) +
                            " × " + std::to_string(m.image.width) + " gives " + std::to_string(m.image.height / patch) +
                            "×" + std::to_string(m.image.width / patch));
  if (m.vision.tokens_per_frame != pooled * pooled)
    c.fail(vision_file, "makes " + std::to_string(pooled * pooled) + " tokens per frame (" + std::to_string(grid) +
                            "² patches pooled to " + std::to_string(pooled) + "²), but manifest.json vision.tokens_per_frame = " +
                            std::to_string(m.vision.tokens_per_frame));
}

// Qwen2.5-VL's and Qwen3-VL's ViT: patch embedding, attention width and merger; Qwen3-VL's learned
// position grid and DeepStack mergers.
void check_qwen_vision(const Checker& c, const Manifest& m, const std::string& vision_file,
                       const std::map<std::string, at::Tensor>& vt) {
  const Dim hidden{m.text.hidden_size, "text.hidden_size"};
  const auto& v = m.vision;
  c.shape(vision_file, vt, "patch_embed.proj.weight",
          {{}, {3, "(RGB)"}, {v.temporal_patch_size, "vision.temporal_patch_size"}, {v.patch_size, "vision.patch_size"},
           {v.patch_size, "vision.patch_size"}});
  const int64_t width = vt.at("patch_embed.proj.weight").size(0);
  c.shape(vision_file, vt, "blocks.0.attn.qkv.weight",
          {{3 * v.num_heads * v.head_dim, "3 × vision.num_heads × vision.head_dim"}, {width, "(the ViT width)"}});
  const int64_t merged = width * v.spatial_merge_size * v.spatial_merge_size;
  const Dim merged_dim{merged, "vision.spatial_merge_size² × the ViT width"};
  if (m.architecture == Architecture::Qwen2_5_VL) {
    c.shape(vision_file, vt, "merger.mlp.0.weight", {merged_dim, merged_dim});
    c.shape(vision_file, vt, "merger.mlp.2.weight", {hidden, {}});
    return;
  }
  c.shape(vision_file, vt, "merger.linear_fc1.weight", {merged_dim, merged_dim});
  c.shape(vision_file, vt, "merger.linear_fc2.weight", {hidden, {}});
  c.shape(vision_file, vt, "pos_embed.weight",
          {{v.num_position_embeddings, "vision.num_position_embeddings"}, {width, "(the ViT width)"}});
  const auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(v.num_position_embeddings))));
  if (side * side != v.num_position_embeddings)
    c.fail("manifest.json", "vision.num_position_embeddings = " + std::to_string(v.num_position_embeddings) +
                                " is not a square (Qwen3-VL learns a square grid of positions)");
  for (int64_t k = 0; k < v.deepstack_layers; ++k)
    c.shape(vision_file, vt, "deepstack_mergers." + std::to_string(k) + ".linear_fc2.weight", {hidden, {}});
  if (vt.count("deepstack_mergers." + std::to_string(v.deepstack_layers) + ".linear_fc2.weight"))
    c.fail(vision_file, "has more DeepStack mergers than manifest.json vision.deepstack_layers = " +
                            std::to_string(v.deepstack_layers));
}

}  // namespace

void check_export_weights(const Manifest& m, const torch::jit::Module& text, const torch::jit::Module& vision,
                          const std::vector<torch::jit::Module>& layers, const Tokenizer& tokenizer) {
  const Checker c(m);
  check_token_ids(c, m, tokenizer);
  check_text_weights(c, m, text);
  check_layer_weights(c, m, layers);
  const std::string vision_file = relative(m, m.vision_file);
  const auto vision_tensors = tensors_of(vision);
  c.dtype(vision_file, vision_tensors);
  if (m.architecture == Architecture::LlavaOnevision) check_siglip_vision(c, m, vision_file, vision_tensors);
  else check_qwen_vision(c, m, vision_file, vision_tensors);
}

}  // namespace svqa
