#include "core/nn/attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

namespace svqa {
namespace {

// Attention of the queries over one range of keys, with the log-sum-exp of its scores, so that
// ranges computed apart merge into one softmax (merge_partials).
struct Partial {
  at::Tensor out;  // [T, heads, d]
  at::Tensor lse;  // [T, heads] float32; -inf where a query sees none of the range
};

double scale_of(const at::Tensor& q) { return 1.0 / std::sqrt(static_cast<double>(q.size(2))); }

// Any device: scores in float32, grouped-query heads by repeating kv heads.
Partial math_partial(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal,
                     const std::optional<at::Tensor>& visible) {
  const int64_t group = q.size(1) / k.size(1);
  const auto kh = k.transpose(0, 1).repeat_interleave(group, 0), vh = v.transpose(0, 1).repeat_interleave(group, 0);
  auto scores = at::matmul(q.transpose(0, 1).to(at::kFloat), kh.transpose(1, 2).to(at::kFloat)) * scale_of(q);
  const double ninf = -std::numeric_limits<double>::infinity();
  if (causal) scores = scores.masked_fill(at::ones({q.size(0), k.size(0)}, scores.options().dtype(at::kBool)).triu(1), ninf);
  if (visible) scores = scores.masked_fill(visible->logical_not(), ninf);
  const auto lse = at::logsumexp(scores, -1);  // [heads, T]
  const auto probs = at::exp(scores - lse.unsqueeze(-1)).nan_to_num(0.0);
  return {at::matmul(probs.to(q.scalar_type()), vh).transpose(0, 1), lse.transpose(0, 1)};
}

// CUDA, no mask: FlashAttention for 16-bit types (kv heads shared in place), else memory-efficient
// attention over repeated kv heads; both return the log-sum-exp. Causal calls here have T == S, so
// top-left and bottom-right alignment agree.
Partial cuda_partial(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal) {
  const int64_t T = q.size(0), d = q.size(2), group = q.size(1) / k.size(1);
  const auto q4 = q.unsqueeze(0).transpose(1, 2), k4 = k.unsqueeze(0).transpose(1, 2), v4 = v.unsqueeze(0).transpose(1, 2);
  const bool half = q.scalar_type() == at::kHalf || q.scalar_type() == at::kBFloat16;
  static std::atomic<bool> flash_refused{false};  // e.g. a GPU older than Ampere: once, then never again
  if (half && d % 8 == 0 && d <= 256 && !flash_refused) {
    try {
      const auto r = at::_scaled_dot_product_flash_attention(q4, k4, v4, 0.0, causal);
      return {std::get<0>(r)[0].transpose(0, 1), std::get<1>(r)[0].transpose(0, 1)};
    } catch (const c10::Error&) {
      flash_refused = true;
    }
  }
  const auto kr = group > 1 ? k4.repeat_interleave(group, 1) : k4, vr = group > 1 ? v4.repeat_interleave(group, 1) : v4;
  const auto r = at::_scaled_dot_product_efficient_attention(q4, kr, vr, std::nullopt, true, 0.0, causal);
  // The kernel pads its log-sum-exp's query axis (to a multiple of 32).
  return {std::get<0>(r)[0].transpose(0, 1), std::get<1>(r)[0].narrow(1, 0, T).transpose(0, 1)};
}

// One fused attention call (no [T, S] score matrix, kv heads shared in place, any strides with a
// contiguous last dim). `causal` is top-left: query i sees keys 0..i. CPU: the flash kernel; CUDA:
// cuda_partial, with a mask (a window's edge, a few keys) the math path; elsewhere the math path.
Partial partial(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal,
                const std::optional<at::Tensor>& visible = std::nullopt) {
  if (q.device().is_cuda() && !visible) return cuda_partial(q, k, v, causal);
  if (!q.device().is_cpu()) return math_partial(q, k, v, causal, visible);
  const auto q4 = q.unsqueeze(0).transpose(1, 2), k4 = k.unsqueeze(0).transpose(1, 2), v4 = v.unsqueeze(0).transpose(1, 2);
  if (!causal && !visible && k.size(1) < q.size(1)) {
    // The queries of the heads sharing a kv head attend as one longer sequence: each key tile is
    // read once for the whole group.
    const int64_t T = q.size(0), kv = k.size(1), group = q.size(1) / kv, d = q.size(2);
    const auto folded = q.view({T, kv, group, d}).permute({1, 2, 0, 3}).reshape({1, kv, group * T, d});
    auto [o, lse] = at::_scaled_dot_product_flash_attention_for_cpu(folded, k4, v4);
    return {o.view({kv, group, T, d}).permute({2, 0, 1, 3}).reshape({T, kv * group, d}),
            lse.view({kv, group, T}).permute({2, 0, 1}).reshape({T, kv * group})};
  }
  if (!visible) {
    auto [o, lse] = at::_scaled_dot_product_flash_attention_for_cpu(q4, k4, v4, 0.0, causal);
    return {o[0].transpose(0, 1), lse[0].transpose(0, 1)};
  }
  // The kernel takes an additive mask in the query dtype, and reports lse 0 for a query that sees nothing.
  const auto additive = at::zeros(visible->sizes(), q.options()).masked_fill(visible->logical_not(),
                                                                           -std::numeric_limits<double>::infinity());
  auto [o, lse] = at::_scaled_dot_product_flash_attention_for_cpu(q4, k4, v4, 0.0, causal, additive);
  const auto blind = visible->logical_not().all(1).unsqueeze(1);  // [T, 1]
  return {o[0].transpose(0, 1), lse[0].transpose(0, 1).masked_fill(blind, -std::numeric_limits<double>::infinity())};
}

// Appends the partials of q over keys [S, kv, d] seen through `mask` (queries at the last T key
// indices). Keys every query sees go to unmasked fused calls, the query's own block to a causal
// one; only a window's edge (fewer than T keys) needs an explicit mask.
void masked_partials(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const AttentionMask& mask,
                     std::vector<Partial>& parts) {
  const int64_t T = q.size(0), S = k.size(0);
  if (!mask.causal) {
    if (mask.window > 0) parts.push_back(partial(q, k, v, false, attention_visibility(T, S, mask, q.device())));
    else parts.push_back(partial(q, k, v, false));
    return;
  }
  const int64_t past = S - T, A = std::min(mask.always_visible, past);
  const int64_t W = mask.window > 0 ? mask.window : S + 1;
  // Past keys j are seen by query i iff j < A or j >= S - T + i - W + 1: by every query from S - W
  // on, by none in [A, S - T - W + 1), by some in between (the window's edge).
  const int64_t all_from = std::clamp(S - W, A, past), edge_from = std::clamp(S - T - W + 1, A, all_from);
  auto range = [](const at::Tensor& t, int64_t from, int64_t to) { return t.narrow(0, from, to - from); };
  if (A > 0 && A == all_from) {
    parts.push_back(partial(q, range(k, 0, past), range(v, 0, past), false));
  } else {
    if (A > 0) parts.push_back(partial(q, range(k, 0, A), range(v, 0, A), false));
    if (all_from < past) parts.push_back(partial(q, range(k, all_from, past), range(v, all_from, past), false));
  }
  if (edge_from == all_from && W >= T) {
    parts.push_back(partial(q, range(k, past, S), range(v, past, S), true));
    return;
  }
  // The edge and the own block under their slice of the mask.
  const auto visible = attention_visibility(T, S, mask, q.device());
  const auto cols = at::cat({at::arange(edge_from, all_from, visible.options().dtype(at::kLong)),
                             at::arange(past, S, visible.options().dtype(at::kLong))});
  parts.push_back(partial(q, at::cat({range(k, edge_from, all_from), range(k, past, S)}),
                          at::cat({range(v, edge_from, all_from), range(v, past, S)}), false,
                          visible.index_select(1, cols)));
}

// One softmax over every part's keys: each part weighted by exp(its lse - the total lse).
at::Tensor merge_partials(const std::vector<Partial>& parts, at::ScalarType dtype) {
  const int64_t T = parts[0].out.size(0), H = parts[0].out.size(1), d = parts[0].out.size(2);
  if (parts.size() == 1) return parts[0].out.reshape({T, H * d}).to(dtype);
  std::vector<at::Tensor> lses;
  for (const auto& p : parts) lses.push_back(p.lse);
  const auto lse = at::stack(lses);           // [P, T, H]
  const auto total = at::logsumexp(lse, 0);   // [T, H]
  auto out = at::zeros({T, H, d}, parts[0].out.options().dtype(at::kFloat));
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto weight = at::exp(lses[i] - total).unsqueeze(-1);  // 0 where the part saw nothing
    out.add_(parts[i].out.to(at::kFloat).nan_to_num(0.0) * weight);
  }
  return out.reshape({T, H * d}).to(dtype);
}

void check_shapes(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const char* who) {
  if (q.dim() != 3 || k.dim() != 3 || v.sizes() != k.sizes() || q.size(2) != k.size(2) || q.size(1) % k.size(1))
    throw std::invalid_argument(std::string(who) +
                                ": expected q [T, heads, d] and k = v [S, kv_heads, d] with heads % kv_heads == 0");
}

}  // namespace

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
  check_shapes(q, k, v, "attend");
  if (k.size(0) < q.size(0) && mask.causal)
    throw std::invalid_argument("attend: causal attention needs at least as many keys as queries");
  if (want_probs) return attend_masked(q, k, v, attention_visibility(q.size(0), k.size(0), mask, q.device()), true);
  std::vector<Partial> parts;
  masked_partials(q, k, v, mask, parts);
  return {merge_partials(parts, q.scalar_type()), {}};
}

AttentionResult attend_masked(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& visible,
                              bool want_probs) {
  check_shapes(q, k, v, "attend");
  const int64_t T = q.size(0), heads = q.size(1), d = q.size(2);
  if (visible.dim() != 2 || visible.size(0) != T || visible.size(1) != k.size(0))
    throw std::invalid_argument("attend: visibility must be [queries, keys]");
  AttentionResult r;
  if (!want_probs) {
    r.out = merge_partials({partial(q, k, v, false, visible)}, q.scalar_type());
    return r;
  }
  // Eager path, softmax in float32 (HF's eager attention), so the probabilities can be returned.
  const auto qh = q.transpose(0, 1);  // [heads, T, d]
  const auto kh = k.transpose(0, 1).repeat_interleave(heads / k.size(1), 0);
  const auto vh = v.transpose(0, 1).repeat_interleave(heads / k.size(1), 0);
  auto scores = at::matmul(qh, kh.transpose(1, 2)) * scale_of(q);
  scores = scores.masked_fill(visible.logical_not(), -std::numeric_limits<double>::infinity());
  r.probs = at::softmax(scores, -1, at::kFloat);
  r.out = at::matmul(r.probs.to(q.scalar_type()), vh).transpose(0, 1).reshape({T, heads * d});
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
  std::vector<Partial> parts;
  for (const auto& s : segments) {
    check_shapes(s.q, s.k, s.v, "attend_joint");
    if (s.q.sizes() != q0.sizes()) throw std::invalid_argument("attend_joint: segments need the same query shape");
    if (s.k.size(0) == 0) continue;
    if (s.mask) masked_partials(s.q, s.k, s.v, *s.mask, parts);
    else if (s.visible.defined()) parts.push_back(partial(s.q, s.k, s.v, false, s.visible));
    else parts.push_back(partial(s.q, s.k, s.v, false));
  }
  if (parts.empty()) throw std::invalid_argument("attend_joint: no keys in any segment");
  return merge_partials(parts, q0.scalar_type());
}

}  // namespace svqa
