#include "strategies/kit/sink_prefill.h"

#include "core/nn/attention.h"
#include "models/backbones/backbone.h"
#include "models/backbones/full_context.h"

namespace svqa {

SinkKv prefill_sinks(Backbone& backbone, const std::vector<int64_t>& ids) {
  const int64_t layers = backbone.num_layers(), n = static_cast<int64_t>(ids.size());
  SinkKv sinks{std::vector<at::Tensor>(layers), std::vector<at::Tensor>(layers), text_positions(0, n)};
  if (n == 0) return sinks;
  const auto rope = text_rotary(backbone.manifest());
  const auto tables = rope.tables(sinks.positions.to(backbone.device()));
  at::Tensor h = backbone.embed(at::tensor(ids, at::kLong));
  for (int64_t l = 0; l < layers; ++l) {
    const auto qkv = backbone.layer_qkv(l, h);
    const auto attn = attend(apply_rotary(qkv.q, tables), apply_rotary(qkv.k, tables), qkv.v, AttentionMask{});
    h = backbone.layer_out(l, h, attn.out);
    sinks.keys[l] = qkv.k;
    sinks.values[l] = qkv.v;
  }
  return sinks;
}

}  // namespace svqa
