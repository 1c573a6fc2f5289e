#include "engine/layer_over_context.h"

#include "core/nn/attention.h"

namespace svqa {

at::Tensor layer_over_context(Backbone& backbone, int64_t layer, const at::Tensor& h, const LayerQkv& qkv,
                              const RotaryTables& tables, KvCache& kv, const SinkWindow& window) {
  at::Tensor out;
  if (kv.defined()) {
    const int64_t context = kv.size();
    auto [k, v] = kv.extend(h.size(0));
    k.copy_(qkv.k);
    apply_rotary_(k, tables);
    v.copy_(qkv.v);
    out = attend_sink_window(qkv.q, tables, kv.keys(), kv.values(), window, layer);
    kv.truncate(context);
  } else {
    out = attend_sink_window(qkv.q, tables, apply_rotary(qkv.k, tables), qkv.v, window, layer);
  }
  return backbone.layer_out(layer, h, out);
}

}  // namespace svqa
