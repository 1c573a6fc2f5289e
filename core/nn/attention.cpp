#include "core/nn/attention.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace svqa {

at::Tensor attention_visibility(int64_t queries, int64_t keys, const AttentionMask& mask, at::Device device) {
  const auto opts = at::TensorOptions().dtype(at::kLong).device(device);
  const auto own = at::arange(keys - queries, keys, opts).unsqueeze(1);  // [T, 1] key index of each query
  const auto key = at::arange(0, keys, opts).unsqueeze(0);              // [1, S]
  auto visible = at::ones({queries, keys}, opts.dtype(at::kBool));
  if (mask.causal) visible = visible & (key <= own);
  if (mask.window > 0) visible = visible & ((key > own - mask.window) | (key < mask.always_visible));
  return visible;
}

AttentionResult attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const AttentionMask& mask,
                       bool want_probs) {
  if (q.dim() != 3 || k.dim() != 3)
    throw std::invalid_argument("attend: expected q [T, heads, d] and k = v [S, kv_heads, d] with heads % kv_heads == 0");
  if (k.size(0) < q.size(0) && mask.causal)
    throw std::invalid_argument("attend: causal attention needs at least as many keys as queries");
  return attend_masked(q, k, v, attention_visibility(q.size(0), k.size(0), mask, q.device()), want_probs);
}

AttentionResult attend_masked(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& visible,
                              bool want_probs) {
  if (q.dim() != 3 || k.dim() != 3 || v.sizes() != k.sizes() || q.size(2) != k.size(2) || q.size(1) % k.size(1))
    throw std::invalid_argument("attend: expected q [T, heads, d] and k = v [S, kv_heads, d] with heads % kv_heads == 0");
  const int64_t T = q.size(0), heads = q.size(1), d = q.size(2);
  if (visible.dim() != 2 || visible.size(0) != T || visible.size(1) != k.size(0))
    throw std::invalid_argument("attend: visibility must be [queries, keys]");
  const auto qh = q.transpose(0, 1);  // [heads, T, d]
  const auto kh = k.transpose(0, 1).repeat_interleave(heads / k.size(1), 0);
  const auto vh = v.transpose(0, 1).repeat_interleave(heads / k.size(1), 0);
  AttentionResult r;
  if (!want_probs) {
    r.out = at::scaled_dot_product_attention(qh, kh, vh, visible);
  } else {
    // Eager path, softmax in float32 (HF's eager attention), so the probabilities can be returned.
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    auto scores = at::matmul(qh, kh.transpose(1, 2)) * scale;
    scores = scores.masked_fill(visible.logical_not(), -std::numeric_limits<double>::infinity());
    r.probs = at::softmax(scores, -1, at::kFloat);
    r.out = at::matmul(r.probs.to(q.scalar_type()), vh);
  }
  r.out = r.out.transpose(0, 1).reshape({T, heads * d});
  return r;
}

AttentionResult attend(const at::Tensor& q, const std::vector<at::Tensor>& ks, const std::vector<at::Tensor>& vs,
                       const AttentionMask& mask, bool want_probs) {
  if (ks.empty() || ks.size() != vs.size()) throw std::invalid_argument("attend: need as many key as value segments, ≥ 1");
  if (ks.size() == 1) return attend(q, ks[0], vs[0], mask, want_probs);
  return attend(q, at::cat(ks, 0), at::cat(vs, 0), mask, want_probs);
}

at::Tensor attend_joint(const std::vector<AttentionSegment>& segments) {
  if (segments.empty()) throw std::invalid_argument("attend_joint: no segments");
  const auto& q0 = segments[0].q;
  const int64_t T = q0.size(0), heads = q0.size(1), d = q0.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<at::Tensor> scores, values;
  for (const auto& s : segments) {
    if (s.q.sizes() != q0.sizes() || s.k.size(1) != s.v.size(1) || heads % s.k.size(1))
      throw std::invalid_argument("attend_joint: segments need the same query shape and heads % kv_heads == 0");
    const int64_t group = heads / s.k.size(1);
    const auto kh = s.k.transpose(0, 1).repeat_interleave(group, 0);  // [heads, S_i, d]
    auto sc = at::matmul(s.q.transpose(0, 1).to(at::kFloat), kh.transpose(1, 2).to(at::kFloat)) * scale;
    if (s.visible.defined()) sc = sc.masked_fill(s.visible.logical_not(), -std::numeric_limits<double>::infinity());
    scores.push_back(sc);
    values.push_back(s.v.transpose(0, 1).repeat_interleave(group, 0));
  }
  const auto probs = at::softmax(at::cat(scores, -1), -1).to(q0.scalar_type());
  const auto out = at::matmul(probs, at::cat(values, 1));  // [heads, T, d]
  return out.transpose(0, 1).reshape({T, heads * d});
}

}  // namespace svqa
