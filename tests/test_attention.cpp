// core/attention and core/rope against direct formulas: GQA head mapping, causal / window / sink
// masks, probabilities, segments under one softmax; RoPE tables and mRoPE sections.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <cmath>

#include "core/nn/attention.h"
#include "core/nn/kv_cache.h"
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

TEST_CASE("fused attention equals the formula wherever a window's edge falls", "[attention]") {
  // The fast path splits keys into ranges every query sees (no mask), the own block (causal) and a
  // window's edge (a small mask), merged by log-sum-exp: every split must give the same result.
  at::manual_seed(3);
  const int64_t H = 8, KV = 2, d = 16;
  struct Case { int64_t T, S; AttentionMask mask; };
  for (const Case c : {Case{7, 7, {}}, Case{1, 30, {}}, Case{7, 40, {true, 12, 0}}, Case{7, 40, {true, 12, 5}},
                       Case{7, 40, {true, 4, 2}}, Case{7, 40, {true, 34, 3}}, Case{7, 40, {true, 40, 0}},
                       Case{7, 40, {true, 3, 0}}, Case{7, 40, {false, 0, 0}}, Case{7, 40, {false, 10, 2}},
                       Case{7, 9, {true, 8, 20}}}) {
    const auto q = at::randn({c.T, H, d}), k = at::randn({c.S, KV, d}), v = at::randn({c.S, KV, d});
    const auto want = naive_attention(q, k, v, attention_visibility(c.T, c.S, c.mask, at::kCPU));
    INFO("T " << c.T << " S " << c.S << " window " << c.mask.window << " sinks " << c.mask.always_visible);
    CHECK(at::allclose(attend(q, k, v, c.mask).out, want, 1e-5, 1e-5));
    // Strided keys, as a view into a bigger buffer.
    const auto kb = at::randn({c.S + 6, KV, d}), vb = at::randn({c.S + 6, KV, d});
    kb.narrow(0, 3, c.S).copy_(k);
    vb.narrow(0, 3, c.S).copy_(v);
    CHECK(at::allclose(attend(q, kb.narrow(0, 3, c.S), vb.narrow(0, 3, c.S), c.mask).out, want, 1e-5, 1e-5));
  }
}

TEST_CASE("on CUDA, fused attention (FlashAttention, memory-efficient) equals the formula", "[attention][cuda]") {
  // Runs where a GPU is (docs/performance.md "GPU"); CI has none, and says so.
  if (!at::hasCUDA()) {
    WARN("no CUDA device: the CUDA attention kernels were not checked");
    return;
  }
  at::manual_seed(5);
  const int64_t H = 8, KV = 2, d = 64;
  struct Case { int64_t T, S; AttentionMask mask; };
  for (const auto dtype : {at::kBFloat16, at::kHalf, at::kFloat})
    for (const Case c : {Case{7, 7, {}}, Case{1, 300, {}}, Case{40, 300, {true, 120, 0}}, Case{40, 300, {true, 120, 5}},
                         Case{7, 40, {true, 4, 2}}, Case{7, 40, {false, 0, 0}}, Case{33, 33, {}}}) {
      const auto q = at::randn({c.T, H, d}), k = at::randn({c.S, KV, d}), v = at::randn({c.S, KV, d});
      const auto want = naive_attention(q, k, v, attention_visibility(c.T, c.S, c.mask, at::kCPU));
      const auto on = [&](const at::Tensor& t) { return t.to(at::kCUDA, dtype); };
      const auto got = attend(on(q), on(k), on(v), c.mask).out;
      INFO("dtype " << dtype << " T " << c.T << " S " << c.S << " window " << c.mask.window << " sinks "
                    << c.mask.always_visible);
      CHECK(got.scalar_type() == dtype);
      const double tol = dtype == at::kFloat ? 1e-4 : 3e-2;
      CHECK(at::allclose(got.to(at::kCPU, at::kFloat), want, tol, tol));
    }
}

TEST_CASE("joint attention: a structured mask equals the dense one and the formula", "[attention]") {
  at::manual_seed(4);
  const int64_t T = 6, S = 25, H = 4, KV = 2, d = 8;
  const auto q = at::randn({T, H, d}), k = at::randn({S, KV, d}), v = at::randn({S, KV, d});
  const auto qs = at::randn({T, H, d}), ks = at::randn({3, KV, d}), vs = at::randn({3, KV, d});
  const AttentionMask window{true, 10, 0};
  const auto visible = attention_visibility(T, S, window, at::kCPU);
  const auto structured = attend_joint({{q, k, v, {}, window}, {qs, ks, vs, {}, {}}});
  const auto dense = attend_joint({{q, k, v, visible, {}}, {qs, ks, vs, {}, {}}});
  CHECK(at::allclose(structured, dense, 1e-5, 1e-5));
  // By hand: one softmax over both segments' scores, each with its own queries.
  auto want = at::zeros({T, H, d}, at::kDouble);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t h = 0; h < H; ++h) {
      const auto s1 = at::matmul(k.select(1, h / 2).to(at::kDouble), q[i][h].to(at::kDouble)).masked_fill(visible[i].logical_not(), -INFINITY);
      const auto s2 = at::matmul(ks.select(1, h / 2).to(at::kDouble), qs[i][h].to(at::kDouble));
      const auto p = at::softmax(at::cat({s1, s2}) / std::sqrt(double(d)), 0);
      want[i][h] = at::matmul(p, at::cat({v.select(1, h / 2), vs.select(1, h / 2)}).to(at::kDouble));
    }
  CHECK(at::allclose(structured, want.reshape({T, H * d}).to(at::kFloat), 1e-5, 1e-5));
}

TEST_CASE("a KV cache appends in place, drops from the front and keeps its contents when it moves", "[attention]") {
  at::manual_seed(5);
  KvCache cache(8, 2, 4, at::TensorOptions().dtype(at::kFloat));
  const auto a = at::randn({5, 2, 4}), b = at::randn({2, 2, 4}), c = at::randn({6, 2, 4});
  cache.append(a, a * 2);
  const void* buffer = cache.keys().data_ptr();
  cache.append(b, b * 2);
  CHECK(cache.keys().data_ptr() == buffer);  // fitted: nothing moved
  CHECK(cache.size() == 7);
  cache.drop_front(4);
  cache.append(c, c * 2);  // 3 + 6 > 8 - 4 free at the end: compacted (3 + 6 > 8: into a bigger buffer)
  const auto want = at::cat({a.narrow(0, 4, 1), b, c});
  CHECK(cache.keys().equal(want));
  CHECK(cache.values().equal(want * 2));
  cache.truncate(2);
  CHECK(cache.keys().equal(want.narrow(0, 0, 2)));
  auto [ks, vs] = cache.extend(1);
  ks.fill_(7);
  vs.fill_(8);
  CHECK(cache.keys()[2].eq(7).all().item<bool>());
  CHECK_THROWS_WITH(cache.drop_front(9), Catch::Contains("cannot drop 9 of 3"));
  auto wrapped = KvCache::wrap(a.clone(), a.clone());
  wrapped.append(b, b);
  CHECK(wrapped.keys().equal(at::cat({a, b})));
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
  const auto t = rope.tables(pos);
  const auto inv = 1.0 / at::pow(10000.0, at::arange(0, d, 2, at::kDouble) / double(d));
  const auto angles = at::arange(3, 7, at::kDouble).unsqueeze(1) * inv;
  CHECK(at::allclose(t.cos, at::cat({angles, angles}, 1).cos().to(at::kFloat), 1e-5, 1e-6));

  // Rotation keeps norms, and q·k depends only on the position difference.
  at::manual_seed(2);
  const auto x = at::randn({4, 2, d});
  CHECK(at::allclose(apply_rotary(x, t).norm(2, -1), x.norm(2, -1), 1e-5, 1e-5));
  const auto in_place = x.clone();
  apply_rotary_(in_place, t);
  CHECK(at::allclose(in_place, apply_rotary(x, t), 1e-6, 1e-6));
  const auto qv = at::randn({1, 1, d}), kv = at::randn({1, 1, d});
  auto dot_at = [&](int64_t pq, int64_t pk) {
    return (apply_rotary(qv, rope.tables(text_positions(pq, 1))) *
            apply_rotary(kv, rope.tables(text_positions(pk, 1)))).sum().item<double>();
  };
  CHECK(dot_at(10, 7) == Approx(dot_at(103, 100)).epsilon(1e-4));

  // mRoPE with sections [2, 3, 3]: slots 0-1 follow t, 2-4 follow h, 5-7 follow w.
  RotaryEmbedding mrope(d, 10000.0, {2, 3, 3});
  const auto same = mrope.tables(pos);
  CHECK(at::allclose(same.cos, t.cos));  // equal rows: plain RoPE
  const auto mixed = at::stack({at::full({1}, 5, at::kLong), at::full({1}, 7, at::kLong), at::full({1}, 9, at::kLong)});
  const auto m = mrope.tables(mixed).cos[0];
  for (int64_t slot = 0; slot < d / 2; ++slot) {
    const double p = slot < 2 ? 5 : slot < 5 ? 7 : 9;
    CHECK(m[slot].item<float>() == Approx(std::cos(p * inv[slot].item<double>())).margin(1e-6));
    CHECK(m[slot + d / 2].item<float>() == Approx(m[slot].item<float>()));
  }
  CHECK_THROWS_WITH(RotaryEmbedding(d, 1e4, {2, 2, 2}), Catch::Contains("sums to 6, expected head_dim/2 = 8"));

  // The last two tables are kept: a retrieval pass alternates its context's and its question's.
  const auto context = text_positions(0, 50), question = text_positions(50, 3);
  const auto first = rope.tables(context);
  const auto asked = rope.tables(question);
  CHECK(rope.tables(context).cos.is_same(first.cos));
  CHECK(rope.tables(question).cos.is_same(asked.cos));
  (void)rope.tables(text_positions(7, 2));  // a third: the oldest (the context's) goes
  CHECK(rope.tables(question).cos.is_same(asked.cos));
  CHECK(!rope.tables(context).cos.is_same(first.cos));
  CHECK(at::equal(rope.tables(context).cos, first.cos));
}

TEST_CASE("interleaved mRoPE (Qwen3-VL) takes slot i from h at i%3==1, w at i%3==2, below 3*section, else t",
          "[rope]") {
  const int64_t d = 32;  // 16 slots, sections [6, 5, 5]: h at 1, 4, ..., 13; w at 2, 5, ..., 14; t at the rest
  RotaryEmbedding rope(d, 10000.0, {6, 5, 5}, MropeLayout::Interleaved);
  const auto inv = 1.0 / at::pow(10000.0, at::arange(0, d, 2, at::kDouble) / double(d));
  const auto pos = at::stack({at::full({1}, 5, at::kLong), at::full({1}, 7, at::kLong), at::full({1}, 9, at::kLong)});
  const auto c = rope.tables(pos).cos[0];
  int64_t h = 0, w = 0;
  for (int64_t slot = 0; slot < d / 2; ++slot) {
    const bool is_h = slot % 3 == 1 && slot < 15, is_w = slot % 3 == 2 && slot < 15;
    h += is_h, w += is_w;
    const double p = is_h ? 7 : is_w ? 9 : 5;
    CHECK(c[slot].item<float>() == Approx(std::cos(p * inv[slot].item<double>())).margin(1e-6));
    CHECK(c[slot + d / 2].item<float>() == Approx(c[slot].item<float>()));
  }
  CHECK((h == 5 && w == 5));
  // The blocks layout with the same sections puts other slots on h and w.
  const auto blocks = RotaryEmbedding(d, 10000.0, {6, 5, 5}).tables(pos).cos[0];
  CHECK_FALSE(at::allclose(blocks, c));
  CHECK_THROWS_WITH(RotaryEmbedding(d, 1e4, {16}, MropeLayout::Interleaved), Catch::Contains("has 3 entries"));
}

}  // namespace
}  // namespace svqa
