#include "strategies/encoding/hermes/layer_shrink.h"

#include "core/nn/rope.h"

namespace svqa {

LayerMemory shrink_layer(const LayerMemory& memory, const at::Tensor& kept, const ShrinkRule& rule) {
  LayerMemory out{memory.keys.index_select(0, kept), memory.values.index_select(0, kept),
                  memory.positions.index_select(1, kept)};
  const int64_t n_kept = kept.size(0);
  if (rule.reindex) out.positions = text_positions(rule.sinks_next, n_kept);
  auto dropped = at::ones({memory.keys.size(0)}, at::kBool);
  dropped.index_fill_(0, kept, false);
  if (!rule.fold || !dropped.any().item<bool>()) return out;
  const auto gone = dropped.nonzero().view(-1);
  const int64_t at_position = n_kept > 0 ? next_position(out.positions) : rule.sinks_next;
  out.keys = at::cat({out.keys, memory.keys.index_select(0, gone).mean(0, true)});
  out.values = at::cat({out.values, memory.values.index_select(0, gone).mean(0, true)});
  out.positions = at::cat({out.positions, text_positions(at_position, 1)}, 1);
  return out;
}

}  // namespace svqa
