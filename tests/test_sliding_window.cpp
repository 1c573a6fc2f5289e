// The sliding-window prefill shared by ReKV, StreamKV and Mem-Stream: how blocks are grouped into
// calls does not matter, and its two hooks (tokens that enter the window, a per-layer observer) do
// what they say.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>
#include <string>

#include "core/engine/visual_units.h"
#include "core/nn/rope.h"
#include "models/full_context.h"
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
      inputs.push_back({u.tokens, u.positions, u.deepstack});
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

// ReKV's window written out directly, in float64: every token ever seen kept per layer (keys rotated
// at their positions), query i of a block at stream index first + i sees token j iff
// 0 <= first + i - index_j < n_local, and once the stream has outgrown n_local the sinks leave the
// window for their own segment (keys un-rotated, queries rotated at n_local - 1) under one softmax.
std::vector<WindowOutput> reference_window(Backbone& backbone, const std::vector<int64_t>& sink_ids,
                                           const std::vector<WindowInput>& blocks, int64_t n_local) {
  const auto rope = text_rotary(backbone.manifest());
  const int64_t layers = backbone.num_layers(), n_init = static_cast<int64_t>(sink_ids.size());
  const int64_t heads = backbone.manifest().text.num_heads, d = backbone.manifest().text.head_dim;
  struct Seen { std::vector<at::Tensor> k, v; std::vector<int64_t> index; };  // rotated keys [kv, d]
  std::vector<Seen> seen(static_cast<size_t>(layers));
  std::vector<at::Tensor> sink_k(layers), sink_v(layers);
  auto attend_ref = [&](const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values, const at::Tensor& mask,
                        const at::Tensor& q_sink, int64_t l) {
    const int64_t T = q.size(0), group = heads / keys.size(1);
    auto out = at::zeros({T, heads, d}, at::kDouble);
    for (int64_t h = 0; h < heads; ++h) {
      auto scores = at::matmul(q.select(1, h).to(at::kDouble), keys.select(1, h / group).to(at::kDouble).t()) / std::sqrt(double(d));
      scores = scores.masked_fill(mask.logical_not(), -INFINITY);
      auto vals = values.select(1, h / group).to(at::kDouble);
      if (q_sink.defined()) {
        scores = at::cat({scores, at::matmul(q_sink.select(1, h).to(at::kDouble), sink_k[l].select(1, h / group).to(at::kDouble).t()) /
                                      std::sqrt(double(d))}, 1);
        vals = at::cat({vals, sink_v[l].select(1, h / group).to(at::kDouble)});
      }
      out.select(1, h).copy_(at::matmul(at::softmax(scores, 1), vals));
    }
    return out.reshape({T, heads * d}).to(at::kFloat);
  };
  // The sinks: plain causal attention among themselves.
  at::Tensor h = backbone.embed(at::tensor(sink_ids, at::kLong));
  const auto sink_tables = rope.tables(text_positions(0, n_init), at::kFloat);
  for (int64_t l = 0; l < layers; ++l) {
    const auto qkv = backbone.layer_qkv(l, h);
    const auto k = apply_rotary(qkv.k, sink_tables);
    h = backbone.layer_out(l, h, attend_ref(apply_rotary(qkv.q, sink_tables), k, qkv.v,
                                            at::ones({n_init, n_init}, at::kBool).tril(), {}, l));
    sink_k[l] = qkv.k, sink_v[l] = qkv.v;
    for (int64_t i = 0; i < n_init; ++i) seen[l].k.push_back(k[i]), seen[l].v.push_back(qkv.v[i]), seen[l].index.push_back(i);
  }
  const auto fixed = rope.tables(text_positions(n_local - 1, 1), at::kFloat);
  std::vector<WindowOutput> out;
  int64_t first = n_init;
  bool separate = false;
  for (const auto& block : blocks) {
    const int64_t n = block.tokens.size(0);
    separate = separate || first + n > n_local;
    const auto tables = rope.tables(block.positions, at::kFloat);
    WindowOutput o;
    h = block.tokens;
    for (int64_t l = 0; l < layers; ++l) {
      const auto qkv = backbone.layer_qkv(l, h);
      const auto k = apply_rotary(qkv.k, tables);
      for (int64_t i = 0; i < n; ++i) seen[l].k.push_back(k[i]), seen[l].v.push_back(qkv.v[i]), seen[l].index.push_back(first + i);
      const auto index = at::tensor(seen[l].index, at::kLong);
      const auto gap = at::arange(first, first + n, at::kLong).unsqueeze(1) - index.unsqueeze(0);
      auto mask = (gap >= 0) & (gap < n_local);
      if (separate) mask = mask & (index >= n_init).unsqueeze(0);
      const RotaryTables sink_q{fixed.cos.expand({n, -1}), fixed.sin.expand({n, -1})};
      h = backbone.layer_out(l, h, attend_ref(apply_rotary(qkv.q, tables), at::stack(seen[l].k), at::stack(seen[l].v), mask,
                                              separate ? apply_rotary(qkv.q, sink_q) : at::Tensor(), l));
      o.keys.push_back(qkv.k);
      o.values.push_back(qkv.v);
    }
    out.push_back(o);
    first += n;
  }
  return out;
}

}  // namespace

TEST_CASE("sliding window equals ReKV's window written out, wherever its edge falls", "[tiny_backbone]") {
  at::InferenceMode inference;
  Setup s;
  // Frames of 9 tokens after 13 sinks: 12 separates the sinks at the first frame, 20 and 31 later,
  // with the window's edge falling inside a frame; 1000000 never fills.
  for (const int64_t n_local : {12, 20, 31, 1000000}) {
    INFO("n_local " << n_local);
    SlidingWindow window(n_local);
    window.begin(s.backbone, s.sinks);
    CHECK(max_diff(window.prefill(s.backbone, s.inputs), reference_window(s.backbone, s.sinks, s.inputs, n_local)) <= 1e-4);
  }
}

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
