// The sliding-window prefill shared by ReKV, StreamKV and Mem-Stream: how blocks are grouped into
// calls does not matter, and its two hooks (tokens that enter the window, a per-layer observer) do
// what they say.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <string>

#include "core/engine/visual_units.h"
#include "models/torchscript_backbone.h"
#include "strategies/encoding/sliding_window.h"

namespace svqa {
namespace {

Frames noise_frames(int64_t n) {
  at::manual_seed(11);
  Frames f{at::randint(0, 256, {n, 48, 48, 3}, at::kByte), {}, 1.0};
  for (int64_t i = 0; i < n; ++i) f.timestamps.push_back(static_cast<double>(i));
  return f;
}

struct Setup {
  TorchScriptBackbone backbone{std::string(SVQA_TINY_EXPORTS) + "/llava_onevision", at::kCPU};
  std::vector<int64_t> sinks = backbone.tokenizer().encode("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n");
  std::vector<WindowInput> inputs;
  Setup() {
    const Frames frames = noise_frames(6);
    VisualUnitMaker maker(backbone, frames);
    for (const auto& u : maker.make(0, 6, static_cast<int64_t>(sinks.size()), static_cast<int64_t>(sinks.size())))
      inputs.push_back({u.tokens, u.positions});
  }
};

float max_diff(const std::vector<WindowOutput>& a, const std::vector<WindowOutput>& b) {
  float d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t l = 0; l < a[i].keys.size(); ++l)
      d = std::max({d, (a[i].keys[l] - b[i].keys[l]).abs().max().item<float>(),
                    (a[i].values[l] - b[i].values[l]).abs().max().item<float>()});
  return d;
}

}  // namespace

TEST_CASE("sliding window: one call or one call per block gives the same K/V, window full or not", "[tiny_backbone]") {
  at::InferenceMode inference;
  Setup s;
  for (const int64_t n_local : {20, 1000000}) {  // 20 tokens: about two frames of 9, the sinks separate early
    INFO("n_local " << n_local);
    SlidingWindow together(n_local), apart(n_local);
    together.begin(s.backbone, s.sinks);
    apart.begin(s.backbone, s.sinks);
    const auto all = together.prefill(s.backbone, s.inputs);
    std::vector<WindowOutput> one_by_one;
    for (const auto& in : s.inputs) one_by_one.push_back(apart.prefill(s.backbone, {in}).front());
    CHECK(max_diff(all, one_by_one) <= 1e-5);
    CHECK(together.tokens_seen() == static_cast<int64_t>(s.sinks.size()) + 6 * s.inputs[0].tokens.size(0));
  }
}

TEST_CASE("sliding window hooks: window tokens thin what later blocks see; after_layer sees every layer",
          "[tiny_backbone]") {
  at::InferenceMode inference;
  Setup s;
  SlidingWindow dense(1000000);
  dense.begin(s.backbone, s.sinks);
  const auto reference = dense.prefill(s.backbone, {s.inputs[0], s.inputs[1]});

  // Keeping every token is the dense window, bit for bit; the observer runs once per layer with both blocks.
  SlidingWindow kept(1000000);
  kept.begin(s.backbone, s.sinks);
  std::vector<int64_t> observed;
  WindowHooks all;
  all.window_tokens = [](int64_t, size_t, const LayerQkv& qkv) { return at::arange(qkv.k.size(0), at::kLong); };
  all.after_layer = [&](int64_t layer, const std::vector<LayerQkv>& blocks) {
    CHECK(blocks.size() == 2);
    observed.push_back(layer);
  };
  CHECK(max_diff(kept.prefill(s.backbone, {s.inputs[0], s.inputs[1]}, all), reference) == 0);
  CHECK(observed == std::vector<int64_t>{0, 1, 2});

  // Keeping none of block 0: block 1 attends to the sinks and itself only, as if block 0 never came.
  SlidingWindow thinned(1000000);
  thinned.begin(s.backbone, s.sinks);
  WindowHooks none;
  none.window_tokens = [](int64_t, size_t block, const LayerQkv& qkv) {
    return block == 0 ? at::empty({0}, at::kLong) : at::arange(qkv.k.size(0), at::kLong);
  };
  const auto without = thinned.prefill(s.backbone, {s.inputs[0], s.inputs[1]}, none);
  SlidingWindow alone(1000000);
  alone.begin(s.backbone, s.sinks);
  const auto only_second = alone.prefill(s.backbone, {s.inputs[1]});
  CHECK(max_diff({without[1]}, only_second) <= 1e-5);
  CHECK(max_diff({without[0]}, {reference[0]}) == 0);  // block 0 itself is unchanged
  CHECK((without[1].keys[1] - reference[1].keys[1]).abs().max().item<float>() > 1e-3);
}

}  // namespace svqa
