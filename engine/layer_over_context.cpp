#include "engine/layer_over_context.h"

#include <stdexcept>

#include "core/memory/context_assembler.h"
#include "core/nn/attention.h"
#include "models/backbones/full_context.h"

namespace svqa {

namespace {

// Layer `layer`'s [sinks | memory] at their own positions, keys rotated, with room for `room` more tokens.
LayerContext memory_context(const MemoryPass& pass, int64_t layer, const RotaryEmbedding& rope, Backbone& backbone,
                            int64_t room) {
  static const SinkKv no_sinks;
  const SinkKv& sinks = pass.sinks ? *pass.sinks : no_sinks;
  if (!pass.bank) return assemble_layer(layer, sinks, std::vector<const KvBlock*>{}, PositionPolicy::Original, 0, {},
                                        rope, backbone.device(), backbone.dtype(), room);
  return assemble_layer(layer, sinks, *pass.bank, pass.bank->blocks_in_layer(layer), PositionPolicy::Original, 0, {},
                        rope, backbone.device(), backbone.dtype(), room);
}

// Attention over the context as HF's eager forward with output_attentions computes it (float32
// softmax), and the mean attention each memory token gets.
at::Tensor attend_with_scores(const LayerQkv& qkv, const RotaryTables& tables, const LayerContext& ctx, int64_t sinks,
                              std::vector<at::Tensor>& scores) {
  const auto q = apply_rotary(qkv.q, tables), k = apply_rotary(qkv.k, tables);
  const auto result = ctx.kv.defined() ? attend(q, {ctx.keys, k}, {ctx.values, qkv.v}, AttentionMask{}, true)
                                       : attend(q, k, qkv.v, AttentionMask{}, true);
  const int64_t memory = ctx.kv.defined() ? ctx.keys.size(0) - sinks : 0;
  scores.push_back(result.probs.mean(0).narrow(1, sinks, memory).mean(0).to(at::kCPU));
  return result.out;
}

}  // namespace

MemoryPassOutput forward_over_memory(Backbone& backbone, const at::Tensor& h, const MemoryPass& pass) {
  const int64_t layers = backbone.num_layers(), n = h.size(0);
  if (pass.positions.size() != 1 && static_cast<int64_t>(pass.positions.size()) != layers)
    throw std::invalid_argument("forward_over_memory: positions for every layer, or one for all");
  const auto rope = text_rotary(backbone.manifest());
  const auto device = backbone.device();
  std::vector<RotaryTables> tables;
  for (const auto& p : pass.positions) tables.push_back(rope.tables(p.to(device)));
  const int64_t sinks = pass.sinks ? pass.sinks->size() : 0;
  MemoryPassOutput out;
  LayerPass layer_pass{{h}, {}, [&](int64_t l, size_t, const at::Tensor&, const LayerQkv& qkv) {
                         const auto& t = tables[tables.size() == 1 ? 0 : static_cast<size_t>(l)];
                         out.keys.push_back(qkv.k);
                         out.values.push_back(qkv.v);
                         auto ctx = memory_context(pass, l, rope, backbone, pass.memory_attention ? 0 : n);
                         if (pass.memory_attention) return attend_with_scores(qkv, t, ctx, sinks, out.memory_attention);
                         return attend_over_context(l, qkv, t, ctx.kv, SinkWindow{});
                       }};
  forward_layers(backbone, std::move(layer_pass));
  return out;
}

at::Tensor attend_over_context(int64_t layer, const LayerQkv& qkv, const RotaryTables& tables, KvCache& kv,
                               const SinkWindow& window) {
  if (!kv.defined()) return attend_sink_window(qkv.q, tables, apply_rotary(qkv.k, tables), qkv.v, window, layer);
  const int64_t context = kv.size();
  auto [k, v] = kv.extend(qkv.k.size(0));
  k.copy_(qkv.k);
  apply_rotary_(k, tables);
  v.copy_(qkv.v);
  auto out = attend_sink_window(qkv.q, tables, kv.keys(), kv.values(), window, layer);
  kv.truncate(context);
  return out;
}

}  // namespace svqa
