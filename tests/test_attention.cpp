// core/attention and core/rope against direct formulas: GQA head mapping, causal / window / sink
// masks, probabilities, segments under one softmax; RoPE tables and mRoPE sections.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>

#include "core/nn/attention.h"
#include "core/nn/rope.h"

namespace svqa {
namespace {

// softmax(q·k/√d) v for one query head against its kv head, over the keys `visible` allows.
at::Tensor naive_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& visible) {
  const int64_t T = q.size(0), H = q.size(1), d = q.size(2), group = H / k.size(1);
  auto out = at::zeros({T, H, d}, at::kDouble);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t h = 0; h < H; ++h) {
      const auto scores = at::matmul(k.select(1, h / group).to(at::kDouble), q[i][h].to(at::kDouble)) / std::sqrt(double(d));
      const auto p = at::softmax(scores.masked_fill(visible[i].logical_not(), -INFINITY), 0);
      out[i][h] = at::matmul(p, v.select(1, h / group).to(at::kDouble));
    }
  return out.reshape({T, H * d}).to(at::kFloat);
}

TEST_CASE("attention equals the formula with grouped-query heads and every mask", "[attention]") {
  at::manual_seed(0);
  const int64_t T = 5, S = 12, H = 6, KV = 2, d = 8;
  const auto q = at::randn({T, H, d}), k = at::randn({S, KV, d}), v = at::randn({S, KV, d});
  for (const AttentionMask mask : {AttentionMask{}, AttentionMask{false, 0, 0}, AttentionMask{true, 4, 0},
                                   AttentionMask{true, 4, 3}}) {
    const auto visible = attention_visibility(T, S, mask, at::kCPU);
    const auto want = naive_attention(q, k, v, visible);
    CHECK(at::allclose(attend(q, k, v, mask).out, want, 1e-5, 1e-5));
    const auto with_probs = attend(q, k, v, mask, true);
    CHECK(at::allclose(with_probs.out, want, 1e-5, 1e-5));
    CHECK(with_probs.probs.sizes() == at::IntArrayRef({H, T, S}));
    CHECK(at::allclose(with_probs.probs.sum(-1), at::ones({H, T}), 1e-5, 1e-5));
    CHECK(with_probs.probs.masked_select(visible.logical_not().unsqueeze(0).expand({H, T, S})).abs().sum().item<float>() == 0);
  }
  // Query i sits at key S - T + i: with a window of 4 and 3 sinks, the last query sees keys 0-2 and 8-11.
  const auto visible = attention_visibility(T, S, AttentionMask{true, 4, 3}, at::kCPU);
  CHECK(visible[T - 1].nonzero().flatten().equal(at::tensor({0, 1, 2, 8, 9, 10, 11}, at::kLong)));
  CHECK(visible[0].nonzero().flatten().equal(at::tensor({0, 1, 2, 4, 5, 6, 7}, at::kLong)));
}

TEST_CASE("attention over segments is attention over their concatenation", "[attention]") {
  at::manual_seed(1);
  const auto q = at::randn({3, 4, 8});
  const auto k1 = at::randn({4, 2, 8}), k2 = at::randn({5, 2, 8}), v1 = at::randn({4, 2, 8}), v2 = at::randn({5, 2, 8});
  const auto joint = attend(q, {k1, k2}, {v1, v2}, AttentionMask{});
  CHECK(at::allclose(joint.out, attend(q, at::cat({k1, k2}), at::cat({v1, v2}), AttentionMask{}).out));
  CHECK_THROWS_WITH(attend(q, at::randn({9, 3, 8}), at::randn({9, 3, 8}), AttentionMask{}),
                    Catch::Contains("heads % kv_heads"));
}

TEST_CASE("rope tables are HF's formula; mRoPE takes each slot from its section's axis", "[rope]") {
  const int64_t d = 16;
  RotaryEmbedding rope(d, 10000.0);
  const auto pos = text_positions(3, 4);
  CHECK(pos.sizes() == at::IntArrayRef({3, 4}));
  CHECK(next_position(pos) == 7);
  const auto t = rope.tables(pos, at::kFloat);
  const auto inv = 1.0 / at::pow(10000.0, at::arange(0, d, 2, at::kDouble) / double(d));
  const auto angles = at::arange(3, 7, at::kDouble).unsqueeze(1) * inv;
  CHECK(at::allclose(t.cos, at::cat({angles, angles}, 1).cos().to(at::kFloat), 1e-5, 1e-6));

  // Rotation keeps norms, and q·k depends only on the position difference.
  at::manual_seed(2);
  const auto x = at::randn({4, 2, d});
  CHECK(at::allclose(apply_rotary(x, t).norm(2, -1), x.norm(2, -1), 1e-5, 1e-5));
  const auto qv = at::randn({1, 1, d}), kv = at::randn({1, 1, d});
  auto dot_at = [&](int64_t pq, int64_t pk) {
    return (apply_rotary(qv, rope.tables(text_positions(pq, 1), at::kFloat)) *
            apply_rotary(kv, rope.tables(text_positions(pk, 1), at::kFloat))).sum().item<double>();
  };
  CHECK(dot_at(10, 7) == Approx(dot_at(103, 100)).epsilon(1e-4));

  // mRoPE with sections [2, 3, 3]: slots 0-1 follow t, 2-4 follow h, 5-7 follow w.
  RotaryEmbedding mrope(d, 10000.0, {2, 3, 3});
  const auto same = mrope.tables(pos, at::kFloat);
  CHECK(at::allclose(same.cos, t.cos));  // equal rows: plain RoPE
  const auto mixed = at::stack({at::full({1}, 5, at::kLong), at::full({1}, 7, at::kLong), at::full({1}, 9, at::kLong)});
  const auto m = mrope.tables(mixed, at::kFloat).cos[0];
  for (int64_t slot = 0; slot < d / 2; ++slot) {
    const double p = slot < 2 ? 5 : slot < 5 ? 7 : 9;
    CHECK(m[slot].item<float>() == Approx(std::cos(p * inv[slot].item<double>())).margin(1e-6));
    CHECK(m[slot + d / 2].item<float>() == Approx(m[slot].item<float>()));
  }
  CHECK_THROWS_WITH(RotaryEmbedding(d, 1e4, {2, 2, 2}), Catch::Contains("sums to 6, expected head_dim/2 = 8"));
}

}  // namespace
}  // namespace svqa
