#include "strategies/kit/sliding_window.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "core/nn/attention.h"
#include "engine/layer_over_context.h"
#include "models/backbones/deepstack.h"
#include "models/backbones/full_context.h"
#include "strategies/kit/sink_prefill.h"

namespace svqa {
namespace {

// Room a window keeps beyond n_local before its buffer is compacted (a copy of the window every
// time that many tokens have entered).
int64_t window_capacity(int64_t n_local, int64_t first_tokens) {
  return std::max<int64_t>(first_tokens, 64) + std::min<int64_t>(n_local + n_local / 4, int64_t{1} << 16);
}

// Positions [3, n] as a positions cache stores them: [n, 1, 3].
at::Tensor as_rows(const at::Tensor& positions) { return positions.t().unsqueeze(1); }

// Positions [3, n]'s first entry; read from host memory when they are there (no operator call).
int64_t first_position(const at::Tensor& positions) {
  if (positions.device().is_cpu() && positions.scalar_type() == at::kLong) return *positions.data_ptr<int64_t>();
  return positions[0][0].item<int64_t>();
}

// Under window positions, how far the rotation base may lag the block's shift before the whole
// window is rotated again (angles then stay below n_local + this + the block's length).
int64_t base_lag(int64_t n_local) { return std::max<int64_t>(n_local / 4, 1); }

}  // namespace

void SlidingWindow::begin(Backbone& backbone, const std::vector<int64_t>& sink_ids) {
  const int64_t layers = backbone.num_layers(), n = static_cast<int64_t>(sink_ids.size());
  const auto device = backbone.device();
  const auto& text = backbone.manifest().text;
  rope_ = text_rotary(backbone.manifest());
  sinks_ = prefill_sinks(backbone, sink_ids);
  sinks_entered_ = 0;
  next_index_ = n;
  layers_.clear();
  layers_.resize(static_cast<size_t>(layers));
  const auto options = at::TensorOptions().dtype(backbone.dtype()).device(device);
  const int64_t capacity = window_capacity(n_local_, n);
  has_base_ = false;
  for (auto& w : layers_) {
    w.kv = KvCache(capacity, text.num_kv_heads, text.head_dim, options);
    if (rules_.relative_positions) w.rotated = KvCache::keys_only(capacity, text.num_kv_heads, text.head_dim, options);
    w.positions = KvCache::keys_only(capacity, 1, 3, options.dtype(at::kLong));
  }
  if (n == 0) return;
  // Under absolute positions the window holds keys rotated once, on entry; under window positions, un-rotated.
  const auto tables = rope_.tables(sinks_.positions.to(device));
  for (int64_t l = 0; l < layers; ++l) {
    auto& w = layers_[static_cast<size_t>(l)];
    w.kv.append(rules_.relative_positions ? sinks_.keys[l] : apply_rotary(sinks_.keys[l], tables), sinks_.values[l]);
    if (rules_.relative_positions) w.rotated.extend(n);  // rotated when the first block sets a base
    w.positions.append(as_rows(sinks_.positions.to(device)), {});
    for (int64_t i = 0; i < n; ++i) w.index.push_back(i);
  }
}

int64_t SlidingWindow::sinks_after(int64_t entered, int64_t first, int64_t n) const {
  const int64_t n_init = sinks_.size();
  if (entered == n_init) return entered;
  if (!rules_.migrate_sinks) return first + n > n_local_ ? n_init : 0;
  // The reference's get_global_hidden_and_mask: the tokens not yet moved (from `entered` to the
  // block's end) exceed n_local by some; that many more sinks, n_init at most, move.
  const int64_t past_local = first + n - entered - n_local_;
  return past_local > 0 ? entered + std::min(n_init - entered, past_local) : entered;
}

// Per block: the stream index of its first token, the sinks in the sink segment once it has
// entered (the same in every layer), its positions and, under window positions, the base its keys
// and queries are rotated relative to: the reference shifts every position so that the window's
// oldest key, at stream index max(0, first − n_local), goes to 0 (1-D positions that follow the
// stream; mRoPE rows shift alike); the base is the last base while within base_lag of that shift.
std::vector<SlidingWindow::BlockPlan> SlidingWindow::plan_blocks(const std::vector<WindowInput>& blocks,
                                                                 at::Device device) const {
  std::vector<BlockPlan> plans(blocks.size());
  int64_t next = next_index_, in = sinks_entered_, base = base_;
  bool has_base = has_base_;
  for (size_t b = 0; b < blocks.size(); ++b) {
    BlockPlan& p = plans[b];
    const int64_t n = blocks[b].tokens.size(0);
    p.first = next;
    p.entered = in = sinks_after(in, next, n);
    p.positions = blocks[b].positions.to(device);
    if (rules_.relative_positions) {
      const int64_t shift = first_position(blocks[b].positions) - (next - std::max<int64_t>(0, next - n_local_));
      if (!has_base || std::abs(shift - base) > base_lag(n_local_)) base = shift;
      has_base = true;
      p.base = base;
    }
    p.query_tables = rope_.tables(p.positions - p.base);
    next += n;
  }
  return plans;
}

void SlidingWindow::drop_sinks_from_window(Layer& w) const {
  const int64_t drop = std::lower_bound(w.index.begin(), w.index.end(), sinks_.size()) - w.index.begin();
  w.kv.drop_front(drop);
  w.positions.drop_front(drop);
  if (w.rotated.defined()) w.rotated.drop_front(drop);
  w.index.erase(w.index.begin(), w.index.begin() + drop);
}

void SlidingWindow::rotate_window(Layer& w, int64_t base) const {
  if (w.rotated_valid && w.base == base) return;
  const auto keys = w.rotated.keys();
  keys.copy_(w.kv.keys());
  apply_rotary_(keys, rope_.tables(w.positions.keys().squeeze(1).t() - base));
  w.base = base;
  w.rotated_valid = true;
}

void SlidingWindow::enter_window(Layer& w, const LayerQkv& qkv, const BlockPlan& plan) const {
  auto [k, v] = w.kv.extend(qkv.k.size(0));
  k.copy_(qkv.k);
  v.copy_(qkv.v);
  // Rotated once, at the block's query positions: its stream positions, or under window positions
  // position − base, as the rest of the window (rotate_window ran first).
  auto rotated = rules_.relative_positions ? w.rotated.extend(qkv.k.size(0)).first : k;
  if (rules_.relative_positions) rotated.copy_(qkv.k);
  apply_rotary_(rotated, plan.query_tables);
  w.positions.append(as_rows(plan.positions), {});
}

// Query i (stream index first + i) sees key j iff 0 <= first + i - index_j < n_local. Window keys
// from first + n - n_local on are seen by every query; the few before (at most n) by some: only
// they and the block's own causal triangle need a mask.
std::vector<AttentionSegment> SlidingWindow::window_segments(const Layer& w, int64_t l, const at::Tensor& queries,
                                                             const at::Tensor& raw_queries, int64_t past, int64_t n,
                                                             const BlockPlan& plan,
                                                             const RotaryTables& sink_query) const {
  const at::Tensor keys = rules_.relative_positions ? w.rotated.keys() : w.kv.keys();
  const at::Tensor values = w.kv.values();
  const int64_t first = plan.first;
  const int64_t edge = std::lower_bound(w.index.begin(), w.index.end(), first + n - n_local_) - w.index.begin();
  std::vector<AttentionSegment> segments;
  if (edge < past)
    segments.push_back({queries, keys.narrow(0, edge, past - edge), values.narrow(0, edge, past - edge), {},
                        AttentionMask{false, 0, 0}});
  if (edge == 0) {
    segments.push_back({queries, keys.narrow(0, past, n), values.narrow(0, past, n), {}, AttentionMask{true, n_local_, 0}});
  } else {
    std::vector<int64_t> edge_index(w.index.begin(), w.index.begin() + edge);
    for (int64_t i = 0; i < n; ++i) edge_index.push_back(first + i);
    const auto gap =
        at::arange(first, first + n, at::kLong).unsqueeze(1) - at::tensor(edge_index, at::kLong).unsqueeze(0);
    segments.push_back({queries, at::cat({keys.narrow(0, 0, edge), keys.narrow(0, past, n)}),
                        at::cat({values.narrow(0, 0, edge), values.narrow(0, past, n)}),
                        ((gap >= 0) & (gap < n_local_)).to(queries.device()), {}});
  }
  if (plan.entered > 0) {  // sinks as in the reference code: keys at position 0, queries at n_local - 1
    const RotaryTables fixed{sink_query.cos.expand({n, -1}), sink_query.sin.expand({n, -1})};
    segments.push_back({apply_rotary(raw_queries, fixed), sinks_.keys[l].narrow(0, 0, plan.entered),
                        sinks_.values[l].narrow(0, 0, plan.entered), {}, {}});
  }
  return segments;
}

void SlidingWindow::keep_block_tokens(Layer& w, int64_t past, int64_t n, int64_t first, const at::Tensor& keep) const {
  if (!keep.defined()) {
    for (int64_t i = 0; i < n; ++i) w.index.push_back(first + i);
    return;
  }
  const auto kept = keep.to(at::kCPU, at::kLong).contiguous();
  const auto rows = kept.to(w.kv.keys().device());
  const auto k = w.kv.keys().narrow(0, past, n).index_select(0, rows);
  const auto v = w.kv.values().narrow(0, past, n).index_select(0, rows);
  const auto p = w.positions.keys().narrow(0, past, n).index_select(0, rows);
  w.kv.truncate(past);
  w.kv.append(k, v);
  w.positions.truncate(past);
  w.positions.append(p, {});
  if (w.rotated.defined()) {
    const auto r = w.rotated.keys().narrow(0, past, n).index_select(0, rows);
    w.rotated.truncate(past);
    w.rotated.append(r, {});
  }
  const int64_t* kept_index = kept.data_ptr<int64_t>();
  for (int64_t i = 0; i < kept.numel(); ++i) w.index.push_back(first + kept_index[i]);
}

void SlidingWindow::slide(Layer& w, int64_t next) const {
  const int64_t drop = std::lower_bound(w.index.begin(), w.index.end(), next - n_local_) - w.index.begin();
  w.kv.drop_front(drop);
  w.positions.drop_front(drop);
  if (w.rotated.defined()) w.rotated.drop_front(drop);
  w.index.erase(w.index.begin(), w.index.begin() + drop);
}

at::Tensor SlidingWindow::attend_block(int64_t l, size_t b, const LayerQkv& qkv, const BlockPlan& plan,
                                       const RotaryTables& sink_query, const WindowHooks& hooks) {
  Layer& w = layers_[static_cast<size_t>(l)];
  const int64_t n = qkv.q.size(0);
  const auto q = apply_rotary(qkv.q, plan.query_tables);
  const int64_t past = w.kv.size();
  if (rules_.relative_positions) rotate_window(w, plan.base);
  enter_window(w, qkv, plan);  // the block enters the window, then attends to it
  auto out = attend_joint(window_segments(w, l, q, qkv.q, past, n, plan, sink_query));
  keep_block_tokens(w, past, n, plan.first, hooks.window_tokens ? hooks.window_tokens(l, b, qkv) : at::Tensor());
  slide(w, plan.first + n);  // keep the tokens the next block's first query can still see
  return out;
}

std::vector<WindowOutput> SlidingWindow::prefill(Backbone& backbone, const std::vector<WindowInput>& blocks,
                                                 const WindowHooks& hooks) {
  const int64_t layers = backbone.num_layers();
  const auto device = backbone.device();
  const std::vector<BlockPlan> plans = plan_blocks(blocks, device);
  const size_t count = blocks.size();
  const int64_t in = count ? plans.back().entered : sinks_entered_;
  RotaryTables sink_query;
  if (in > 0) sink_query = rope_.tables(text_positions(n_local_ - 1, 1).to(device));

  LayerPass pass;
  std::vector<WindowOutput> out(count);
  for (size_t b = 0; b < count; ++b) {
    pass.hidden.push_back(blocks[b].tokens.to(device, backbone.dtype()));
    pass.deepstack.push_back({blocks[b].deepstack, {}});
    out[b].keys.resize(static_cast<size_t>(layers));
    out[b].values.resize(static_cast<size_t>(layers));
  }
  if (hooks.follower.defined()) pass.hidden.push_back(hooks.follower), pass.deepstack.emplace_back();
  int64_t entered_before = 0;
  std::vector<LayerQkv> seen;  // this layer's blocks, for the follower
  pass.attend = [&](int64_t l, size_t b, const at::Tensor&, const LayerQkv& qkv) {
    if (b == count) return hooks.follow(l, qkv, seen);
    if (b == 0) entered_before = sinks_entered_, seen.clear();
    if (!rules_.migrate_sinks && !rules_.sinks_stay && entered_before == 0 && plans[b].entered > 0)
      drop_sinks_from_window(layers_[static_cast<size_t>(l)]);
    entered_before = plans[b].entered;
    out[b].keys[l] = qkv.k;
    out[b].values[l] = qkv.v;
    if (hooks.follower.defined()) seen.push_back(qkv);
    return attend_block(l, b, qkv, plans[b], sink_query, hooks);
  };
  forward_layers(backbone, std::move(pass));
  sinks_entered_ = in;
  if (count) {
    next_index_ = plans.back().first + blocks.back().tokens.size(0);
    base_ = plans.back().base;
    has_base_ = rules_.relative_positions;
  }
  return out;
}

}  // namespace svqa
