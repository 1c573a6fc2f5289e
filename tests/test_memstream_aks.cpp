// Mem-Stream's AKS encoder (strategies/encoding/memstream/memstream_aks) on the tiny random Qwen2.5-VL export:
// keeping every token it encodes exactly as ReKV does (bit for bit, a sliding window that slides);
// on a planted stream where only known tokens change between frame-features, exactly those stay in
// the window; the window holds 1/r of the tokens it would hold under ReKV.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "engine/visual_units.h"
#include "models/backbones/torchscript_backbone.h"
#include "strategies/encoding/memstream/memstream_aks.h"
#include "strategies/kit/rekv_sliding_window.h"
#include "tests/strategy_fixtures.h"

#ifndef SVQA_TINY_EXPORTS
#error "SVQA_TINY_EXPORTS must name the directory the CTest fixture exports tiny backbones to"
#endif

namespace svqa {
namespace {

std::vector<int64_t> sinks(Backbone& b) {
  return b.tokenizer().encode("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n");
}

// The tiny Qwen2.5-VL and the frame-features (2-frame temporal patches) of `n_frames` random frames at 0.5 fps.
struct TinyQwenStream {
  TorchScriptBackbone backbone{std::string(SVQA_TINY_EXPORTS) + "/qwen2_5_vl", at::kCPU};
  std::vector<VisualUnit> units;
  int64_t n_sinks = 0;
  explicit TinyQwenStream(int64_t n_frames) {
    const Frames frames = test::random_frames(n_frames, 140, 168, 0.5, 11);
    VisualUnitMaker maker(backbone, frames);
    n_sinks = static_cast<int64_t>(sinks(backbone).size());
    units = maker.make(0, n_frames, n_sinks, n_sinks);
  }
};

// Encodes `units` in two calls (the window carries over) and returns the bank.
std::unique_ptr<MemoryBank> encode(EncodingStrategy& encoder, Backbone& backbone, const std::vector<VisualUnit>& units) {
  auto bank = std::make_unique<MemoryBank>(MemoryBankOptions{backbone.num_layers(), at::kCPU, -1, ""});
  encoder.begin_stream(backbone, sinks(backbone), *bank);
  const auto half = static_cast<std::ptrdiff_t>(units.size() / 2);
  encoder.encode(backbone, {units.begin(), units.begin() + half}, *bank);
  encoder.encode(backbone, {units.begin() + half, units.end()}, *bank);
  return bank;
}

MemstreamAksOptions aks(int64_t n_local, int64_t keep, const std::string& similarity = "concat_heads") {
  MemstreamAksOptions o;
  o.n_local = n_local;
  o.keep = keep;
  o.similarity = similarity;
  return o;
}

}  // namespace

TEST_CASE("AKS keeping every token encodes exactly as ReKV, window sliding", "[tiny_backbone][aks]") {
  at::InferenceMode inference;
  TinyQwenStream stream(12);
  auto& backbone = stream.backbone;
  const auto& units = stream.units;
  const int64_t n = units[0].tokens.size(0);
  const int64_t n_local = 2 * n + 3;  // about two frame-features: the window slides, the sinks leave it
  RekvSlidingWindow rekv(RekvOptions{n_local});
  MemstreamAks all(aks(n_local, n));
  const auto want = encode(rekv, backbone, units), got = encode(all, backbone, units);
  REQUIRE(got->size() == want->size());
  for (int64_t id = 0; id < want->size(); ++id)
    for (int64_t l = 0; l < backbone.num_layers(); ++l) {
      INFO("block " << id << " layer " << l);
      CHECK(at::equal(got->block(id).keys[l], want->block(id).keys[l]));
      CHECK(at::equal(got->block(id).values[l], want->block(id).values[l]));
    }
  // Keeping fewer changes what later frame-features attend to (not the first's keys at layer 0).
  MemstreamAks sparse(aks(n_local, 2));
  const auto thinned = encode(sparse, backbone, units);
  CHECK(at::equal(thinned->block(0).keys[0], want->block(0).keys[0]));
  CHECK_FALSE(at::allclose(thinned->block(5).keys.back(), want->block(5).keys.back()));
}

TEST_CASE("AKS keeps exactly the tokens that changed since the previous frame-feature", "[tiny_backbone][aks]") {
  at::InferenceMode inference;
  TinyQwenStream stream(4);
  auto& backbone = stream.backbone;
  auto& units = stream.units;
  // Frame-feature 1 is frame-feature 0 with tokens 1, 5 and 6 replaced: at layer 0 every other
  // token's key is the same (a key depends only on its own token there).
  const std::vector<int64_t> changed = {1, 5, 6};
  units[1].tokens = units[0].tokens.clone();
  for (const int64_t i : changed) units[1].tokens[i] = at::randn({units[0].tokens.size(1)});
  for (const std::string similarity : {"concat_heads", "per_kv_head"}) {
    INFO(similarity);
    MemstreamAks encoder(aks(100000, static_cast<int64_t>(changed.size()), similarity));
    MemoryBank bank({backbone.num_layers(), at::kCPU, -1, ""});
    encoder.begin_stream(backbone, sinks(backbone), bank);
    encoder.encode(backbone, {units[0]}, bank);
    CHECK_FALSE(encoder.last_kept(0).defined());  // the first frame-feature stays whole (first: dense)
    encoder.encode(backbone, {units[1]}, bank);
    const auto kept = encoder.last_kept(0);
    REQUIRE(kept.defined());
    CHECK(std::vector<int64_t>(kept.data_ptr<int64_t>(), kept.data_ptr<int64_t>() + kept.numel()) == changed);
    CHECK(bank.block(1).keys[0].size(0) == units[1].tokens.size(0));  // the bank keeps every token
  }
}

TEST_CASE("the window holds 1/r of the tokens ReKV's would", "[tiny_backbone][aks]") {
  at::InferenceMode inference;
  TinyQwenStream stream(16);
  auto& backbone = stream.backbone;
  const auto& units = stream.units;
  const int64_t n = units[0].tokens.size(0), n_local = 5 * n;  // a window of five frame-features
  RekvSlidingWindow rekv(RekvOptions{n_local});
  MemstreamAksOptions o;
  o.n_local = n_local;
  o.compression = 4;
  MemstreamAks sparse(o);
  encode(rekv, backbone, units);
  encode(sparse, backbone, units);
  const int64_t k = std::max<int64_t>(1, std::llround(static_cast<double>(n) / 4));
  for (int64_t l = 0; l < backbone.num_layers(); ++l) {
    INFO("layer " << l);
    // ReKV: the last n_local tokens; AKS: k of each frame-feature whose tokens are within them.
    CHECK(rekv.window().attended_tokens(l) == n_local);
    CHECK(sparse.window().attended_tokens(l) == 5 * k);
  }
}

}  // namespace svqa

namespace svqa {

TEST_CASE("AKS modes: dilated rows and columns of the token grid, ties to the earlier token", "[aks]") {
  // A 4 x 6 grid of merged tokens at temporal index 7, row-major, h from 10 and w from 20.
  const auto h = at::arange(10, 14, at::kLong).repeat_interleave(6), w = at::arange(20, 26, at::kLong).repeat(4);
  const auto grid = at::stack({at::full({24}, 7, at::kLong), h, w});
  const auto picked = dilated_tokens(grid, 2, 2);
  CHECK(std::vector<int64_t>(picked.data_ptr<int64_t>(), picked.data_ptr<int64_t>() + picked.numel()) ==
        std::vector<int64_t>{0, 2, 4, 12, 14, 16});
  CHECK(dilated_tokens(grid, 2, 4).numel() == 4);  // x8: rows 0, 2; columns 0, 4
  const auto flat = at::arange(5, 21, at::kLong).unsqueeze(0).expand({3, 16});  // 1-D positions: every 4th token
  CHECK(at::equal(dilated_tokens(flat, 2, 2), at::tensor({0, 4, 8, 12}, at::kLong)));
  const auto kept = least_similar(at::tensor({0.5, 0.1, 0.9, 0.1, 0.3}, at::kDouble), 3);
  CHECK(at::equal(kept, at::tensor({1, 3, 4}, at::kLong)));  // 0.1, 0.1 (earlier first), 0.3; ascending
  CHECK(at::equal(least_similar(at::tensor({0.5, 0.1}, at::kDouble), 5), at::tensor({0, 1}, at::kLong)));
}

TEST_CASE("AKS uniform_frames leaves every r-th frame-feature whole in the window and nothing of the rest",
          "[tiny_backbone][aks]") {
  at::InferenceMode inference;
  TinyQwenStream stream(8);
  auto& backbone = stream.backbone;
  const auto& units = stream.units;
  const int64_t n_sinks = stream.n_sinks;
  MemstreamAksOptions o;
  o.mode = "uniform_frames";
  o.compression = 2;
  MemstreamAks encoder(o);
  MemoryBank bank({backbone.num_layers(), at::kCPU, -1, ""});
  encoder.begin_stream(backbone, sinks(backbone), bank);
  for (size_t i = 0; i < units.size(); ++i) {
    INFO("frame-feature " << i);
    encoder.encode(backbone, {units[i]}, bank);
    for (int64_t l = 0; l < backbone.num_layers(); ++l) {
      const auto& kept = encoder.last_kept(l);
      if (i % 2 == 0) CHECK_FALSE(kept.defined());
      else CHECK(kept.numel() == 0);
    }
  }
  // The window (everything fits in 17,000 tokens): the sinks and the two even frame-features.
  CHECK(encoder.window().attended_tokens(0) == n_sinks + 2 * units[0].tokens.size(0));
}

}  // namespace svqa
