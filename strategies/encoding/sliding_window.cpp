#include "strategies/encoding/sliding_window.h"

#include <algorithm>

#include "core/nn/attention.h"
#include "models/full_context.h"

namespace svqa {
namespace {

at::Tensor last(const at::Tensor& t, int64_t n, int64_t dim) { return t.narrow(dim, t.size(dim) - n, n); }
at::Tensor drop_front(const at::Tensor& t, int64_t n, int64_t dim) { return t.narrow(dim, n, t.size(dim) - n); }
at::Tensor cat_after(const at::Tensor& past, const at::Tensor& next, int64_t dim) {
  return past.defined() ? at::cat({past, next}, dim) : next;
}

}  // namespace

void SlidingWindow::begin(Backbone& backbone, const std::vector<int64_t>& sink_ids) {
  const int64_t layers = backbone.num_layers(), n = static_cast<int64_t>(sink_ids.size());
  const auto device = backbone.device();
  sinks_ = SinkKv{std::vector<at::Tensor>(layers), std::vector<at::Tensor>(layers), text_positions(0, n)};
  sinks_separate_ = false;
  next_index_ = n;
  layers_.assign(static_cast<size_t>(layers), Layer{});
  if (n == 0) return;
  const auto rope = text_rotary(backbone.manifest());
  const auto tables = rope.tables(sinks_.positions.to(device), backbone.dtype());
  at::Tensor h = backbone.embed(at::tensor(sink_ids, at::kLong));
  const auto index = at::arange(n, at::kLong);
  for (int64_t l = 0; l < layers; ++l) {
    const auto qkv = backbone.layer_qkv(l, h);
    const auto attn = attend(apply_rotary(qkv.q, tables), apply_rotary(qkv.k, tables), qkv.v, AttentionMask{});
    h = backbone.layer_out(l, h, attn.out);
    sinks_.keys[l] = qkv.k;
    sinks_.values[l] = qkv.v;
    layers_[l] = Layer{qkv.k, qkv.v, index.to(device), index, sinks_.positions.to(device)};
  }
}

std::vector<WindowOutput> SlidingWindow::prefill(Backbone& backbone, const std::vector<WindowInput>& blocks,
                                                 const WindowHooks& hooks) {
  const int64_t layers = backbone.num_layers(), n_init = sinks_.size();
  const auto device = backbone.device();
  const auto dtype = backbone.dtype();
  const auto rope = text_rotary(backbone.manifest());

  // Per block: the stream index of its first token, and whether the sinks have left the window by
  // then (the first time the window would hold more than n_local tokens; as in the reference code).
  std::vector<int64_t> first(blocks.size());
  std::vector<bool> separate(blocks.size());
  bool sep = sinks_separate_;
  int64_t next = next_index_;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const int64_t n = blocks[b].tokens.size(0);
    if (!sep && next + n > n_local_) sep = true;
    separate[b] = sep;
    first[b] = next;
    next += n;
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
        const int64_t drop = std::min(n_init, w.index_cpu.defined() ? w.index_cpu.size(0) : 0);
        if (drop > 0)
          w = Layer{drop_front(w.k, drop, 0), drop_front(w.v, drop, 0), drop_front(w.index, drop, 0),
                    drop_front(w.index_cpu, drop, 0), drop_front(w.positions, drop, 1)};
      }
      const auto qkv = backbone.layer_qkv(l, h[b]);
      const auto own_index_cpu = at::arange(first[b], first[b] + n, at::kLong);
      const auto own_index = own_index_cpu.to(device);
      const auto own_positions = blocks[b].positions.to(device);
      const auto keys = cat_after(w.k, qkv.k, 0), values = cat_after(w.v, qkv.v, 0);
      const auto index = cat_after(w.index, own_index, 0);
      const auto tables = rope.tables(cat_after(w.positions, own_positions, 1), dtype);
      const RotaryTables own{last(tables.cos, n, 0), last(tables.sin, n, 0)};
      // Query i sees key j iff j is not after it and at most n_local - 1 tokens before it.
      const auto gap = own_index.unsqueeze(1) - index.unsqueeze(0);
      const auto visible = (gap >= 0) & (gap < n_local_);
      const auto q = apply_rotary(qkv.q, own);
      const auto k = apply_rotary(keys, tables);
      at::Tensor attn;
      if (separate[b] && n_init > 0) {
        const RotaryTables fixed{sink_query.cos.expand({n, -1}), sink_query.sin.expand({n, -1})};
        attn = attend_joint({{q, k, values, visible}, {apply_rotary(qkv.q, fixed), sinks_.keys[l], sinks_.values[l], {}}});
      } else {
        attn = attend_masked(q, k, values, visible).out;
      }
      h[b] = backbone.layer_out(l, h[b], attn);
      out[b].keys[l] = qkv.k;
      out[b].values[l] = qkv.v;

      // What later tokens may attend to: the block (thinned by the hook), then the window slides.
      at::Tensor add_k = qkv.k, add_v = qkv.v, add_index = own_index, add_index_cpu = own_index_cpu,
                 add_positions = own_positions;
      if (hooks.window_tokens) {
        const auto keep = hooks.window_tokens(l, b, qkv);
        if (keep.defined()) {
          const auto keep_cpu = keep.to(at::kCPU, at::kLong), keep_dev = keep.to(device, at::kLong);
          add_k = qkv.k.index_select(0, keep_dev);
          add_v = qkv.v.index_select(0, keep_dev);
          add_index = own_index.index_select(0, keep_dev);
          add_index_cpu = own_index_cpu.index_select(0, keep_cpu);
          add_positions = own_positions.index_select(1, keep_dev);
        }
      }
      w = Layer{cat_after(w.k, add_k, 0), cat_after(w.v, add_v, 0), cat_after(w.index, add_index, 0),
                cat_after(w.index_cpu, add_index_cpu, 0), cat_after(w.positions, add_positions, 1)};
      if (separate[b]) {  // keep the tokens the next block's first query can still see
        const int64_t threshold = first[b] + n - n_local_;
        const int64_t* p = w.index_cpu.data_ptr<int64_t>();
        const int64_t drop = std::lower_bound(p, p + w.index_cpu.size(0), threshold) - p;
        if (drop > 0)
          w = Layer{drop_front(w.k, drop, 0), drop_front(w.v, drop, 0), drop_front(w.index, drop, 0),
                    drop_front(w.index_cpu, drop, 0), drop_front(w.positions, drop, 1)};
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
