// The sliding-window prefill shared by ReKV, StreamKV and Mem-Stream: how blocks are grouped into
// calls does not matter, and its two hooks (tokens that enter the window, a per-layer observer) do
// what they say.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/visual_units.h"
#include "core/nn/rope.h"
#include "models/backbones/full_context.h"
#include "models/backbones/torchscript_backbone.h"
#include "strategies/kit/sliding_window.h"

namespace svqa {
namespace {

Frames noise_frames(int64_t n) {
  at::manual_seed(11);
  Frames f{at::randint(0, 256, {n, 48, 48, 3}, at::kByte), {}, 1.0};
  for (int64_t i = 0; i < n; ++i) f.timestamps.push_back(static_cast<double>(i));
  return f;
}

struct Setup {
  TorchScriptBackbone backbone;
  std::vector<int64_t> sinks = backbone.tokenizer().encode("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n");
  std::vector<WindowInput> inputs;
  explicit Setup(int64_t frames = 6, const std::string& arch = "llava_onevision")
      : backbone(std::string(SVQA_TINY_EXPORTS) + "/" + arch, at::kCPU) {
    const Frames f = noise_frames(frames);
    VisualUnitMaker maker(backbone, f);
    for (const auto& u : maker.make(0, frames, static_cast<int64_t>(sinks.size()), static_cast<int64_t>(sinks.size())))
      inputs.push_back({u.tokens, u.positions, u.deepstack});
  }
};

float max_diff(const std::vector<WindowOutput>& a, const std::vector<WindowOutput>& b) {
  float d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t l = 0; l < a[i].keys.size(); ++l)
      d = std::max({d, (a[i].keys[l].to(at::kFloat) - b[i].keys[l].to(at::kFloat)).abs().max().item<float>(),
                    (a[i].values[l].to(at::kFloat) - b[i].values[l].to(at::kFloat)).abs().max().item<float>()});
  return d;
}

// x [T, heads, d] rotated at `positions` (float64 throughout: tables, angles and products).
at::Tensor rotate64(const at::Tensor& x, const at::Tensor& positions, double theta) {
  const int64_t d = x.size(-1), half = d / 2;
  const auto inv = 1.0 / at::pow(at::scalar_tensor(theta, at::kDouble), at::arange(0, d, 2, at::kDouble) / double(d));
  const auto angles = positions.to(at::kDouble).unsqueeze(1) * inv.unsqueeze(0);
  const auto cos = at::cat({angles.cos(), angles.cos()}, 1).unsqueeze(1), sin = at::cat({angles.sin(), angles.sin()}, 1).unsqueeze(1);
  const auto xd = x.to(at::kDouble);
  return xd * cos + at::cat({-xd.narrow(-1, half, half), xd.narrow(-1, 0, half)}, -1) * sin;
}

// ReKV's window written out directly in float64 (kv_cache_manager.py ContextManager + rope.py): per
// layer every token ever seen is kept un-rotated; a block starting at stream index s attends to
// tokens j with 0 <= s + i - j < n_local, rotated at positions relative to the window (j - base,
// base = max(0, s - n_local); `relative` false: their own positions) and, under the same softmax, to
// the sinks in the sink segment (keys un-rotated, queries at n_local - 1). `migrate`: the sinks join
// that segment min(n_init, tokens not yet moved - n_local) at a time and stay window tokens; else all
// at once at the first block past n_local, leaving the window.
std::vector<WindowOutput> reference_window(Backbone& backbone, const std::vector<int64_t>& sink_ids,
                                           const std::vector<WindowInput>& blocks, int64_t n_local, bool migrate = true,
                                           bool relative = true) {
  const double theta = backbone.manifest().text.rope_theta;
  const int64_t layers = backbone.num_layers(), n_init = static_cast<int64_t>(sink_ids.size());
  const int64_t heads = backbone.manifest().text.num_heads, d = backbone.manifest().text.head_dim;
  const auto model_dtype = backbone.dtype();
  struct Seen { std::vector<at::Tensor> k, v; std::vector<int64_t> index, position; };  // un-rotated keys [kv, d]
  std::vector<Seen> seen(static_cast<size_t>(layers));
  std::vector<at::Tensor> sink_k(layers), sink_v(layers);
  auto attend_ref = [&](const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values, const at::Tensor& mask,
                        const at::Tensor& q_sink, int64_t entered, int64_t l) {
    const int64_t T = q.size(0), group = heads / keys.size(1);
    auto out = at::zeros({T, heads, d}, at::kDouble);
    for (int64_t h = 0; h < heads; ++h) {
      auto scores = at::matmul(q.select(1, h), keys.select(1, h / group).t()) / std::sqrt(double(d));
      scores = scores.masked_fill(mask.logical_not(), -INFINITY);
      auto vals = values.select(1, h / group).to(at::kDouble);
      if (entered > 0) {
        const auto sk = sink_k[l].narrow(0, 0, entered).select(1, h / group).to(at::kDouble);
        scores = at::cat({scores, at::matmul(q_sink.select(1, h), sk.t()) / std::sqrt(double(d))}, 1);
        vals = at::cat({vals, sink_v[l].narrow(0, 0, entered).select(1, h / group).to(at::kDouble)});
      }
      out.select(1, h).copy_(at::matmul(at::softmax(scores, 1), vals));
    }
    return out.reshape({T, heads * d}).to(model_dtype);
  };
  // The sinks: plain causal attention among themselves.
  at::Tensor h = backbone.embed(at::tensor(sink_ids, at::kLong));
  const auto sink_positions = at::arange(n_init, at::kLong);
  for (int64_t l = 0; l < layers; ++l) {
    const auto qkv = backbone.layer_qkv(l, h);
    h = backbone.layer_out(l, h, attend_ref(rotate64(qkv.q, sink_positions, theta), rotate64(qkv.k, sink_positions, theta),
                                            qkv.v, at::ones({n_init, n_init}, at::kBool).tril(), {}, 0, l));
    sink_k[l] = qkv.k, sink_v[l] = qkv.v;
    for (int64_t i = 0; i < n_init; ++i)
      seen[l].k.push_back(qkv.k[i]), seen[l].v.push_back(qkv.v[i]), seen[l].index.push_back(i), seen[l].position.push_back(i);
  }
  std::vector<WindowOutput> out;
  int64_t first = n_init, entered = 0;
  for (const auto& block : blocks) {
    const int64_t n = block.tokens.size(0);
    if (entered < n_init) {
      const int64_t past_local = first + n - entered - n_local;
      if (!migrate) entered = first + n > n_local ? n_init : 0;
      else if (past_local > 0) entered += std::min(n_init - entered, past_local);
    }
    // Relative: every position less the block's shift, which puts stream index base at 0.
    const int64_t base = std::max<int64_t>(0, first - n_local);
    const int64_t shift = relative ? block.positions[0][0].item<int64_t>() - (first - base) : 0;
    const auto own = block.positions[0];
    WindowOutput o;
    h = block.tokens.to(model_dtype);
    for (int64_t l = 0; l < layers; ++l) {
      const auto qkv = backbone.layer_qkv(l, h);
      auto& s = seen[static_cast<size_t>(l)];
      for (int64_t i = 0; i < n; ++i) {
        s.k.push_back(qkv.k[i]), s.v.push_back(qkv.v[i]), s.index.push_back(first + i);
        s.position.push_back(own[i].item<int64_t>());
      }
      const auto index = at::tensor(s.index, at::kLong);
      const auto gap = at::arange(first, first + n, at::kLong).unsqueeze(1) - index.unsqueeze(0);
      auto mask = (gap >= 0) & (gap < n_local);
      if (!migrate && entered > 0) mask = mask & (index >= n_init).unsqueeze(0);
      const auto key_positions = at::tensor(s.position, at::kLong) - shift;
      const auto sink_q = rotate64(qkv.q, at::full({n}, n_local - 1, at::kLong), theta);
      h = backbone.layer_out(l, h, attend_ref(rotate64(qkv.q, own - shift, theta), rotate64(at::stack(s.k), key_positions, theta),
                                              at::stack(s.v), mask, sink_q, entered, l));
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
  // Frames of 9 tokens after 14 sinks: 12 moves sinks in at the first frame, 20 and 31 later, over
  // two or three frames, with the window's edge falling inside a frame; 1000000 never fills.
  for (const int64_t n_local : {12, 20, 31, 1000000}) {
    INFO("n_local " << n_local);
    SlidingWindow window(n_local);  // the reference's rules: window positions, sinks migrate
    window.begin(s.backbone, s.sinks);
    CHECK(max_diff(window.prefill(s.backbone, s.inputs), reference_window(s.backbone, s.sinks, s.inputs, n_local)) <= 1e-4);
    SlidingWindow legacy(n_local, {false, false});  // absolute positions, all sinks at once
    legacy.begin(s.backbone, s.sinks);
    CHECK(max_diff(legacy.prefill(s.backbone, s.inputs),
                   reference_window(s.backbone, s.sinks, s.inputs, n_local, false, false)) <= 1e-4);
  }
}

TEST_CASE("sliding window: sinks migrate as ReKV moves them, and are seen twice meanwhile", "[tiny_backbone]") {
  at::InferenceMode inference;
  Setup s;
  const auto n_init = static_cast<int64_t>(s.sinks.size());  // frames of 9 tokens
  REQUIRE(n_init == 14);
  SlidingWindow window(20);
  window.begin(s.backbone, s.sinks);
  std::vector<int64_t> entered;
  for (const auto& in : s.inputs) {
    (void)window.prefill(s.backbone, {in});
    entered.push_back(window.sinks_entered());
  }
  // Frame 0 ends at 23 tokens: 3 past n_local move in; frame 1 (32, 3 moved): 9 more; frame 2: the last 2.
  CHECK(entered == std::vector<int64_t>{3, 12, 14, 14, 14, 14});
  SlidingWindow at_once(20, {true, false});
  at_once.begin(s.backbone, s.sinks);
  (void)at_once.prefill(s.backbone, {s.inputs[0]});
  CHECK(at_once.sinks_entered() == n_init);
  // Migrated sinks stay in the window until it slides past them: 20 tokens kept after frame 0 (3..22),
  // the sinks among them; at_once keeps only the frame.
  CHECK(window.attended_tokens(0) == 20);
  CHECK(at_once.attended_tokens(0) == 9);
  // StreamKV's rule: all at once, and still in the window.
  SlidingWindow stay(20, {true, false, true});
  stay.begin(s.backbone, s.sinks);
  (void)stay.prefill(s.backbone, {s.inputs[0]});
  CHECK(stay.sinks_entered() == n_init);
  CHECK(stay.attended_tokens(0) == 20);
}

TEST_CASE("window positions: after a stream 10x the window, keys as ReKV's rotation in float64", "[tiny_backbone]") {
  at::InferenceMode inference;
  // Varied weights (std 0.3): attention depends on the rotation. n_local 30 over 60 frames of 9 tokens.
  Setup s(60, "llava_onevision_varied");
  const int64_t n_local = 30;
  REQUIRE(static_cast<int64_t>(s.sinks.size()) + 60 * 9 >= 10 * n_local);
  const auto reference = reference_window(s.backbone, s.sinks, s.inputs, n_local);
  SlidingWindow window(n_local);
  window.begin(s.backbone, s.sinks);
  CHECK(max_diff(window.prefill(s.backbone, s.inputs), reference) <= 1e-5);
}

// Per block, the largest K/V difference from `reference`.
std::vector<float> block_errors(const std::vector<WindowOutput>& a, const std::vector<WindowOutput>& reference) {
  std::vector<float> out;
  for (size_t i = 0; i < a.size(); ++i) out.push_back(max_diff({a[i]}, {reference[i]}));
  return out;
}

// The blocks' positions moved `offset` on, as if the stream had run that long before them.
std::vector<WindowInput> moved(const std::vector<WindowInput>& inputs, int64_t offset) {
  std::vector<WindowInput> out;
  for (const auto& in : inputs) out.push_back({in.tokens, in.positions + offset, in.deepstack});
  return out;
}

// The mean K/V difference over blocks [from, to) of a window from its float64 transcription, the
// blocks placed `offset` positions on (the mean: in bf16 a largest difference is one bf16 step of the
// largest value, whatever the rotation).
double window_error(Setup& s, WindowRules rules, int64_t n_local, int64_t offset, size_t from, size_t to) {
  const auto inputs = moved(s.inputs, offset);
  SlidingWindow window(n_local, rules);
  window.begin(s.backbone, s.sinks);
  const auto ours = window.prefill(s.backbone, inputs);
  const auto reference = reference_window(s.backbone, s.sinks, inputs, n_local, true, rules.relative_positions);
  double sum = 0;
  int64_t count = 0;
  for (size_t i = from; i < to; ++i)
    for (size_t l = 0; l < ours[i].keys.size(); ++l)
      for (const auto& [a, b] : {std::pair{ours[i].keys[l], reference[i].keys[l]}, std::pair{ours[i].values[l], reference[i].values[l]}}) {
        sum += (a.to(at::kDouble) - b.to(at::kDouble)).abs().sum().item<double>();
        count += a.numel();
      }
  return sum / static_cast<double>(count);
}

TEST_CASE("window positions: the rotation error does not grow with the stream, in bf16 or float32", "[tiny_backbone]") {
  at::InferenceMode inference;
  const int64_t n_local = 30;
  // Frames 20-59 (long past the sinks) placed at positions ~1k and ~350k (an hour of LLaVA-OV at 0.5
  // fps), each against float64 arithmetic of the same rule. Window positions keep every angle below
  // n_local + 9 however long the stream: the K/V at ~350k are those at ~1k, bit for bit. Absolute
  // positions (svqa before window positions) rotate at the stream's positions, where float32 angles
  // are off by up to ~0.02 rad: in float32 the error grows with the stream, as the comparison sees (in
  // bf16 the tiny model's rounding, ~0.4 %, hides it: its 16-wide heads have one fast frequency,
  // exact in float32).
  Setup bf16(60, "llava_onevision_varied_bf16");
  const double window_near = window_error(bf16, {true, true}, n_local, 1000, 20, 60);
  const double window_far = window_error(bf16, {true, true}, n_local, 350000, 20, 60);
  Setup fp32(60, "llava_onevision_varied");
  const double absolute_near = window_error(fp32, {false, true}, n_local, 1000, 20, 60);
  const double absolute_far = window_error(fp32, {false, true}, n_local, 350000, 20, 60);
  const double window_far32 = window_error(fp32, {true, true}, n_local, 350000, 20, 60);
  INFO("bf16 window: " << window_near << " at ~1k, " << window_far << " at ~350k; float32 absolute: " << absolute_near
                       << ", " << absolute_far << "; float32 window at ~350k: " << window_far32);
  CHECK(window_near > 0);
  CHECK(window_far == window_near);
  CHECK(absolute_far > 10.0 * absolute_near);
  CHECK(window_far32 < absolute_near);
}

// Elements of every cosine computed while it lives (rotary tables: one row per rotated position).
class CosineCount {
 public:
  CosineCount() {
    elements() = 0;
    handle_ = at::addThreadLocalCallback(at::RecordFunctionCallback(on_call).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
  }
  ~CosineCount() { at::removeCallback(handle_); }
  static int64_t& elements() {
    thread_local int64_t n = 0;
    return n;
  }

 private:
  static std::unique_ptr<at::ObserverContext> on_call(const at::RecordFunction& fn) {
    if (std::string(fn.name()) == "aten::cos" && !fn.inputs().empty() && fn.inputs()[0].isTensor())
      elements() += fn.inputs()[0].toTensor().numel();
    return nullptr;
  }
  at::CallbackHandle handle_;
};

TEST_CASE("window positions: keys are rotated once on entry, the whole window only when its base moves", "[tiny_backbone]") {
  at::InferenceMode inference;
  // n_local 200 over 60 frames of 9 tokens: full from the 22nd frame on. Re-rotating the window at
  // every block (what the reference does) computes a table row per window key per block, ~10k rows
  // here; svqa's rows are the blocks' own (540) and the window's each time the base moves (every
  // n_local / 4 = 50 tokens of slide, ~200 rows each).
  Setup s(60, "llava_onevision_varied");
  const int64_t n_local = 200, tokens = 60 * 9, half_dim = s.backbone.manifest().text.head_dim / 2;
  SlidingWindow window(n_local);
  window.begin(s.backbone, s.sinks);
  CosineCount count;
  std::vector<WindowOutput> out;
  for (const auto& in : s.inputs) out.push_back(window.prefill(s.backbone, {in}).front());
  const int64_t rows = CosineCount::elements() / (2 * half_dim);  // a table row: the frequencies twice
  const int64_t bound = tokens + (tokens / (n_local / 4) + 2) * (n_local + 9);
  INFO("table rows computed: " << rows << ", bound " << bound);
  CHECK(rows <= bound);
  CHECK(max_diff(out, reference_window(s.backbone, s.sinks, s.inputs, n_local)) <= 1e-5);
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

TEST_CASE("sliding window hooks: window tokens thin what later blocks see; a follower sees every layer's blocks",
          "[tiny_backbone]") {
  at::InferenceMode inference;
  Setup s;
  // Absolute positions: "as if block 0 never came" keeps block 1 at its own positions (window positions
  // would follow the stream's index, which thinning leaves alone).
  const WindowRules absolute{false, true};
  SlidingWindow dense(1000000, absolute);
  dense.begin(s.backbone, s.sinks);
  const auto reference = dense.prefill(s.backbone, {s.inputs[0], s.inputs[1]});

  // Keeping every token is the dense window, bit for bit; the follower goes through every layer after
  // both blocks, with their q/k/v there, and leaves them as they are.
  SlidingWindow kept(1000000, absolute);
  kept.begin(s.backbone, s.sinks);
  std::vector<int64_t> observed;
  WindowHooks all;
  all.window_tokens = [](int64_t, size_t, const LayerQkv& qkv) { return at::arange(qkv.k.size(0), at::kLong); };
  all.follower = s.backbone.embed(at::tensor(s.sinks, at::kLong));
  all.follow = [&](int64_t layer, const LayerQkv& own, const std::vector<LayerQkv>& blocks) {
    CHECK(blocks.size() == 2);
    CHECK(own.q.size(0) == static_cast<int64_t>(s.sinks.size()));
    observed.push_back(layer);
    return attend(own.q, own.k, own.v, AttentionMask{}).out;
  };
  CHECK(max_diff(kept.prefill(s.backbone, {s.inputs[0], s.inputs[1]}, all), reference) == 0);
  CHECK(observed == std::vector<int64_t>{0, 1, 2});

  // Keeping none of block 0: block 1 attends to the sinks and itself only, as if block 0 never came.
  SlidingWindow thinned(1000000, absolute);
  thinned.begin(s.backbone, s.sinks);
  WindowHooks none;
  none.window_tokens = [](int64_t, size_t block, const LayerQkv& qkv) {
    return block == 0 ? at::empty({0}, at::kLong) : at::arange(qkv.k.size(0), at::kLong);
  };
  const auto without = thinned.prefill(s.backbone, {s.inputs[0], s.inputs[1]}, none);
  SlidingWindow alone(1000000, absolute);
  alone.begin(s.backbone, s.sinks);
  const auto only_second = alone.prefill(s.backbone, {s.inputs[1]});
  CHECK(max_diff({without[1]}, only_second) <= 1e-5);
  CHECK(max_diff({without[0]}, {reference[0]}) == 0);  // block 0 itself is unchanged
  CHECK((without[1].keys[1] - reference[1].keys[1]).abs().max().item<float>() > 1e-3);
}

}  // namespace svqa
