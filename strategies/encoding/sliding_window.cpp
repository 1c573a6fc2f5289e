#include "strategies/encoding/sliding_window.h"

#include <algorithm>
#include <vector>

#include "core/nn/attention.h"
#include "models/deepstack.h"
#include "models/full_context.h"
#include "strategies/encoding/sink_prefill.h"

namespace svqa {
namespace {

// Room a window keeps beyond n_local before its buffer is compacted (a copy of the window every
// time that many tokens have entered).
int64_t window_capacity(int64_t n_local, int64_t first_tokens) {
  return std::max<int64_t>(first_tokens, 64) + std::min<int64_t>(n_local + n_local / 4, int64_t{1} << 16);
}

}  // namespace

void SlidingWindow::begin(Backbone& backbone, const std::vector<int64_t>& sink_ids) {
  const int64_t layers = backbone.num_layers(), n = static_cast<int64_t>(sink_ids.size());
  const auto device = backbone.device();
  const auto& text = backbone.manifest().text;
  sinks_ = prefill_sinks(backbone, sink_ids);
  sinks_separate_ = false;
  next_index_ = n;
  layers_.clear();
  layers_.resize(static_cast<size_t>(layers));
  const auto options = at::TensorOptions().dtype(backbone.dtype()).device(device);
  for (auto& w : layers_) w.kv = KvCache(window_capacity(n_local_, n), text.num_kv_heads, text.head_dim, options);
  if (n == 0) return;
  // The window holds keys rotated once, on entry.
  const auto tables = text_rotary(backbone.manifest()).tables(sinks_.positions.to(device), backbone.dtype());
  for (int64_t l = 0; l < layers; ++l) {
    auto& w = layers_[static_cast<size_t>(l)];
    w.kv.append(apply_rotary(sinks_.keys[l], tables), sinks_.values[l]);
    for (int64_t i = 0; i < n; ++i) w.index.push_back(i);
  }
}

std::vector<WindowOutput> SlidingWindow::prefill(Backbone& backbone, const std::vector<WindowInput>& blocks,
                                                 const WindowHooks& hooks) {
  const int64_t layers = backbone.num_layers(), n_init = sinks_.size();
  const auto device = backbone.device();
  const auto dtype = backbone.dtype();
  const auto rope = text_rotary(backbone.manifest());

  // Per block: the stream index of its first token, whether the sinks have left the window by
  // then (the first time the window would hold more than n_local tokens; as in the reference code),
  // and its rotary tables (the same in every layer).
  std::vector<int64_t> first(blocks.size());
  std::vector<bool> separate(blocks.size());
  std::vector<RotaryTables> own(blocks.size());
  bool sep = sinks_separate_;
  int64_t next = next_index_;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const int64_t n = blocks[b].tokens.size(0);
    if (!sep && next + n > n_local_) sep = true;
    separate[b] = sep;
    first[b] = next;
    next += n;
    own[b] = rope.tables(blocks[b].positions.to(device), dtype);
  }
  // Sinks as in the reference code: keys at position 0 (un-rotated), queries at a fixed distance n_local - 1.
  RotaryTables sink_query;
  if (n_init > 0 && sep) sink_query = rope.tables(text_positions(n_local_ - 1, 1).to(device), dtype);

  std::vector<at::Tensor> h;
  std::vector<WindowOutput> out(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    h.push_back(blocks[b].tokens.to(device, dtype));
    out[b].keys.resize(static_cast<size_t>(layers));
    out[b].values.resize(static_cast<size_t>(layers));
  }
  for (int64_t l = 0; l < layers; ++l) {
    Layer& w = layers_[static_cast<size_t>(l)];
    bool layer_separate = sinks_separate_;
    std::vector<LayerQkv> seen;
    for (size_t b = 0; b < blocks.size(); ++b) {
      const int64_t n = h[b].size(0);
      if (separate[b] && !layer_separate) {  // the sinks leave the window for their own segment
        layer_separate = true;
        const int64_t drop = std::min<int64_t>(n_init, static_cast<int64_t>(w.index.size()));
        w.kv.drop_front(drop);
        w.index.erase(w.index.begin(), w.index.begin() + drop);
      }
      const auto qkv = backbone.layer_qkv(l, h[b]);
      const auto q = apply_rotary(qkv.q, own[b]);
      // The block enters the window (rotated once, here), then attends to it: query i (stream index
      // first + i) sees key j iff 0 <= first + i - index_j < n_local. Window keys from
      // first + n - n_local on are seen by every query; the few before (at most n) by some: only
      // they and the block's own causal triangle need a mask.
      const int64_t past = w.kv.size();
      {
        auto [k, v] = w.kv.extend(n);
        k.copy_(qkv.k);
        apply_rotary_(k, own[b]);
        v.copy_(qkv.v);
      }
      const auto keys = w.kv.keys(), values = w.kv.values();
      const int64_t edge = std::lower_bound(w.index.begin(), w.index.end(), first[b] + n - n_local_) - w.index.begin();
      std::vector<AttentionSegment> segments;
      if (edge < past)
        segments.push_back({q, keys.narrow(0, edge, past - edge), values.narrow(0, edge, past - edge), {},
                            AttentionMask{false, 0, 0}});
      if (edge == 0) {
        segments.push_back({q, keys.narrow(0, past, n), values.narrow(0, past, n), {}, AttentionMask{true, n_local_, 0}});
      } else {
        std::vector<int64_t> edge_index(w.index.begin(), w.index.begin() + edge);
        for (int64_t i = 0; i < n; ++i) edge_index.push_back(first[b] + i);
        const auto gap = at::arange(first[b], first[b] + n, at::kLong).unsqueeze(1) -
                         at::tensor(edge_index, at::kLong).unsqueeze(0);
        segments.push_back({q, at::cat({keys.narrow(0, 0, edge), keys.narrow(0, past, n)}),
                            at::cat({values.narrow(0, 0, edge), values.narrow(0, past, n)}),
                            ((gap >= 0) & (gap < n_local_)).to(device), {}});
      }
      if (separate[b] && n_init > 0) {
        const RotaryTables fixed{sink_query.cos.expand({n, -1}), sink_query.sin.expand({n, -1})};
        segments.push_back({apply_rotary(qkv.q, fixed), sinks_.keys[l], sinks_.values[l], {}, {}});
      }
      h[b] = DeepStack{blocks[b].deepstack, {}}.apply(backbone.layer_out(l, h[b], attend_joint(segments)), l);
      out[b].keys[l] = qkv.k;
      out[b].values[l] = qkv.v;

      // What later tokens may attend to: the block (thinned by the hook), then the window slides.
      at::Tensor keep;
      if (hooks.window_tokens) keep = hooks.window_tokens(l, b, qkv);
      if (keep.defined()) {
        const auto kept = keep.to(at::kCPU, at::kLong).contiguous();
        const auto rows = kept.to(device);
        const auto k = keys.narrow(0, past, n).index_select(0, rows), v = values.narrow(0, past, n).index_select(0, rows);
        w.kv.truncate(past);
        w.kv.append(k, v);
        const int64_t* p = kept.data_ptr<int64_t>();
        for (int64_t i = 0; i < kept.numel(); ++i) w.index.push_back(first[b] + p[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) w.index.push_back(first[b] + i);
      }
      if (separate[b]) {  // keep the tokens the next block's first query can still see
        const int64_t drop =
            std::lower_bound(w.index.begin(), w.index.end(), first[b] + n - n_local_) - w.index.begin();
        w.kv.drop_front(drop);
        w.index.erase(w.index.begin(), w.index.begin() + drop);
      }
      if (hooks.after_layer) seen.push_back(qkv);
    }
    if (hooks.after_layer) hooks.after_layer(l, seen);
  }
  if (!blocks.empty()) sinks_separate_ = separate.back();
  next_index_ = next;
  return out;
}

}  // namespace svqa
