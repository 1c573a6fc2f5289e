#pragma once
// Test fixtures for strategy authors: what a strategy's test builds by hand otherwise. A backbone
// stub for strategies that never run the model, blocks with random or placeholder K/V, banks with
// blocks planted along a question's queries (the answer is known), random frames, scratch dirs,
// Python reference scripts.
//
//   #include "tests/strategy_fixtures.h"
//   const test::PlantedBank planted({/*layers*/ 3, /*heads*/ 4, /*kv_heads*/ 2, /*head_dim*/ 8}, 20, {3, 11, 17});
//   MyRetrieval r(options);
//   CHECK(r.select(planted.queries[0], planted.bank) == planted.planted);

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include "engine/stream_types.h"
#include "core/memory/kv_block.h"
#include "core/memory/memory_bank.h"
#include "models/backbones/backbone.h"
#include "models/video/frame_source.h"
#include "models/image_text/image_text_model.h"

namespace svqa::test {

// A backbone for strategies that never run the model (external retrieval, bank-only logic): it
// reports `layers` layers on the CPU in float32; running any part of it throws.
class StubBackbone final : public Backbone {
 public:
  explicit StubBackbone(int64_t layers = 0) { manifest_.text.num_layers = layers; }
  const Manifest& manifest() const override { return manifest_; }
  const Tokenizer& tokenizer() const override { throw unused(); }
  at::Device device() const override { return at::kCPU; }
  at::ScalarType dtype() const override { return at::kFloat; }
  at::Tensor encode_frames(const VisualInput&) override { throw unused(); }
  std::optional<at::Tensor> video_newline() const override { return std::nullopt; }
  at::Tensor embed(const at::Tensor&) override { throw unused(); }
  LayerQkv layer_qkv(int64_t, const at::Tensor&) override { throw unused(); }
  at::Tensor layer_out(int64_t, const at::Tensor&, const at::Tensor&) override { throw unused(); }
  at::Tensor logits(const at::Tensor&) override { throw unused(); }

 private:
  static std::logic_error unused() { return std::logic_error("StubBackbone: this test's strategy ran the model"); }
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

// An empty directory under the system temp dir, unique to this process.
inline std::string temp_dir(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() / ("svqa_test_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(p);
  return p.string();
}

// A bank on the CPU that never spills.
inline MemoryBankOptions cpu_bank(int64_t layers) { return {layers, at::kCPU, -1, ""}; }

// The attention shape of a test model.
struct Shape {
  int64_t layers = 3, heads = 4, kv_heads = 2, head_dim = 8;
};

// A block of `n` tokens with random K/V in every layer and ReKV's representative (the mean key),
// 1-D positions from `first_position`.
inline KvBlock random_block(int64_t layers, int64_t n, int64_t kv, int64_t d, int64_t first_position,
                            at::ScalarType dtype = at::kFloat) {
  KvBlock b;
  b.positions = at::arange(first_position, first_position + n, at::kLong).unsqueeze(0).expand({3, n}).contiguous();
  for (int64_t l = 0; l < layers; ++l) {
    b.keys.push_back(at::randn({n, kv, d}).to(dtype));
    b.values.push_back(at::randn({n, kv, d}).to(dtype));
    b.representatives.push_back(mean_key_representative(b.keys.back()));
  }
  return b;
}

// A block covering frames [first, last] with one placeholder token of zeros per layer: for
// strategies that choose by span or frame, not by K/V.
inline KvBlock frame_block(int64_t layers, int64_t first, int64_t last, Granularity g = Granularity::Frame) {
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

// Random question queries and keys ([5, heads, d], [5, kv_heads, d]) for every layer.
inline std::vector<LayerQuery> random_queries(const Shape& s) {
  std::vector<LayerQuery> q;
  for (int64_t l = 0; l < s.layers; ++l) q.push_back({l, at::randn({5, s.heads, s.head_dim}), at::randn({5, s.kv_heads, s.head_dim})});
  return q;
}

// Moves `b`'s keys in every layer onto the question's mean query (averaged over each kv head's
// query heads), so any query · key or query · representative score ranks it first.
inline void plant_along(KvBlock& b, const std::vector<LayerQuery>& queries, const Shape& s) {
  for (int64_t l = 0; l < s.layers; ++l) {
    const auto& q = queries[static_cast<size_t>(l)].queries;
    const auto direction = q.mean(0).view({s.kv_heads, s.heads / s.kv_heads, s.head_dim}).mean(1);  // [kv, d]
    b.keys[l] = b.keys[l] * 0.1 + 3.0 * direction.unsqueeze(0);
    b.representatives[l] = mean_key_representative(b.keys[l]);
  }
}

// A bank of `blocks` random blocks of `tokens` tokens (block i: frame i), those in `planted`
// planted along `queries` (random_queries, drawn first): a retrieval strategy that scores by the
// question's queries must choose exactly `planted`.
struct PlantedBank {
  PlantedBank(const Shape& s, int64_t blocks, std::vector<int64_t> planted_ids, int64_t tokens = 6)
      : bank(cpu_bank(s.layers)), queries(random_queries(s)), planted(std::move(planted_ids)) {
    for (int64_t i = 0; i < blocks; ++i) {
      auto b = random_block(s.layers, tokens, s.kv_heads, s.head_dim, i * tokens);
      b.first_frame = b.last_frame = i;
      if (std::find(planted.begin(), planted.end(), i) != planted.end()) plant_along(b, queries, s);
      bank.add(b);
    }
  }
  MemoryBank bank;
  std::vector<LayerQuery> queries;
  std::vector<int64_t> planted;
};

// `n` random frames of h × w at `fps` (timestamps i / fps), from `seed`.
inline Frames random_frames(int64_t n, int64_t h, int64_t w, double fps, uint64_t seed = 7) {
  at::manual_seed(seed);
  Frames f{at::randint(0, 256, {n, h, w, 3}, at::kByte), {}, fps};
  for (int64_t i = 0; i < n; ++i) f.timestamps.push_back(static_cast<double>(i) / fps);
  return f;
}

// Runs `.venv/bin/python tests/python/SCRIPT ARG` from the repository root (the tests' working
// directory), for tests that hold a strategy against a Python transcription of its reference code
// or against Hugging Face; true when the script exits with 0.
inline bool run_python(const std::string& script, const std::string& arg) {
  if (!std::filesystem::exists(".venv/bin/python")) throw std::runtime_error(".venv/bin/python not found (scripts/setup.sh makes it)");
  return std::system((".venv/bin/python tests/python/" + script + " '" + arg + "'").c_str()) == 0;
}

}  // namespace svqa::test
