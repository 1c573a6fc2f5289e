#include "strategies/encoding/rekv_sliding_window.h"

#include "core/nn/attention.h"
#include "models/backbone.h"
#include "models/full_context.h"

namespace svqa {
namespace {

at::Tensor last(const at::Tensor& t, int64_t n, int64_t dim) { return t.narrow(dim, t.size(dim) - n, n); }

}  // namespace

void RekvSlidingWindow::begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) {
  (void)bank;
  const int64_t layers = backbone.num_layers(), n = static_cast<int64_t>(sink_ids.size());
  sinks_ = SinkKv{std::vector<at::Tensor>(layers), std::vector<at::Tensor>(layers), text_positions(0, n)};
  sinks_separate_ = false;
  next_position_ = n;
  if (n > 0) {
    const auto rope = text_rotary(backbone.manifest());
    const auto tables = rope.tables(sinks_.positions.to(backbone.device()), backbone.dtype());
    at::Tensor h = backbone.embed(at::tensor(sink_ids, at::kLong));
    for (int64_t l = 0; l < layers; ++l) {
      const auto qkv = backbone.layer_qkv(l, h);
      const auto attn = attend(apply_rotary(qkv.q, tables), apply_rotary(qkv.k, tables), qkv.v, AttentionMask{});
      h = backbone.layer_out(l, h, attn.out);
      sinks_.keys[l] = qkv.k;
      sinks_.values[l] = qkv.v;
    }
  }
  window_k_ = sinks_.keys;
  window_v_ = sinks_.values;
  window_positions_ = sinks_.positions;
}

void RekvSlidingWindow::encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) {
  for (const auto& unit : units) encode_unit(backbone, unit, bank);
}

void RekvSlidingWindow::encode_unit(Backbone& backbone, const VisualUnit& unit, MemoryBank& bank) {
  const int64_t layers = backbone.num_layers(), n = unit.tokens.size(0);
  const int64_t heads = backbone.manifest().text.num_heads, n_init = sinks_.size();
  const auto device = backbone.device();
  const auto dtype = backbone.dtype();
  const auto rope = text_rotary(backbone.manifest());

  // The first time the stream outgrows the window, the sinks leave it for their own segment.
  if (!sinks_separate_ && window_positions_.size(1) + n > options_.n_local) {
    sinks_separate_ = true;
    for (int64_t l = 0; l < layers; ++l) {
      window_k_[l] = window_k_[l].narrow(0, n_init, window_k_[l].size(0) - n_init);
      window_v_[l] = window_v_[l].narrow(0, n_init, window_v_[l].size(0) - n_init);
    }
    window_positions_ = window_positions_.narrow(1, n_init, window_positions_.size(1) - n_init);
  }
  const auto positions = at::cat({window_positions_, unit.positions.to(window_positions_.device())}, 1);
  const auto tables = rope.tables(positions.to(device), dtype);
  const RotaryTables own{last(tables.cos, n, 0), last(tables.sin, n, 0)};
  const int64_t S = positions.size(1);
  // Sinks as in the reference code: keys at position 0, queries at a fixed distance n_local - 1.
  RotaryTables sink_query;
  const bool joint = sinks_separate_ && n_init > 0;
  if (joint) sink_query = rope.tables(text_positions(options_.n_local - 1, 1).to(device), dtype);

  KvBlock block;
  block.granularity = Granularity::Frame;
  block.first_frame = unit.first_frame;
  block.last_frame = unit.last_frame;
  block.start_time = unit.start_time;
  block.end_time = unit.end_time;
  block.positions = unit.positions.to(at::kCPU);
  block.keys.resize(layers);
  block.values.resize(layers);
  block.representatives.resize(layers);

  at::Tensor h = unit.tokens.to(device, dtype);
  for (int64_t l = 0; l < layers; ++l) {
    const auto qkv = backbone.layer_qkv(l, h);
    const auto keys = at::cat({window_k_[l], qkv.k}, 0), values = at::cat({window_v_[l], qkv.v}, 0);
    const auto q = apply_rotary(qkv.q, own);
    const auto k = apply_rotary(keys, tables);
    at::Tensor out;
    if (!joint) {
      out = attend(q, k, values, AttentionMask{true, options_.n_local, 0}).out;
    } else {
      const RotaryTables fixed{sink_query.cos.expand({n, -1}), sink_query.sin.expand({n, -1})};
      out = attend_joint({{q, k, values, {}, AttentionMask{true, options_.n_local, 0}},
                          {apply_rotary(qkv.q, fixed), sinks_.keys[l], sinks_.values[l], {}, {}}});
    }
    h = backbone.layer_out(l, h, out);
    block.keys[l] = qkv.k;
    block.values[l] = qkv.v;
    block.representatives[l] = mean_key_representative(qkv.k, heads);
    const int64_t keep = sinks_separate_ ? std::min(options_.n_local, S) : S;
    window_k_[l] = last(keys, keep, 0);
    window_v_[l] = last(values, keep, 0);
  }
  window_positions_ = last(positions, sinks_separate_ ? std::min(options_.n_local, S) : S, 1);
  next_position_ = std::max(next_position_, svqa::next_position(unit.positions));
  bank.add(std::move(block));
}

}  // namespace svqa
