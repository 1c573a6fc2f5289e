#include "core/memory/context_assembler.h"

#include <algorithm>
#include <stdexcept>

namespace svqa {

PositionPolicy position_policy_from_name(const std::string& name) {
  if (name == "contiguous") return PositionPolicy::Contiguous;
  if (name == "original") return PositionPolicy::Original;
  if (name == "stacked") return PositionPolicy::Stacked;
  throw std::invalid_argument("unknown position policy '" + name + "' (expected contiguous, original or stacked)");
}

const char* position_policy_name(PositionPolicy policy) {
  switch (policy) {
    case PositionPolicy::Contiguous: return "contiguous";
    case PositionPolicy::Original: return "original";
    case PositionPolicy::Stacked: return "stacked";
  }
  return "?";
}

at::Tensor contiguous_positions(const at::Tensor& encoded, int64_t start) {
  return encoded - encoded.min() + start;
}

bool stream_order(const KvBlock* a, const KvBlock* b) {
  return a->last_frame != b->last_frame ? a->last_frame < b->last_frame : a->id < b->id;
}

LayerContext assemble_layer(int64_t layer, const SinkKv& sinks, std::vector<const KvBlock*> blocks,
                            PositionPolicy policy, int64_t stream_end, const std::vector<at::Tensor>& stream_slots,
                            const RotaryEmbedding& rope, at::Device device, at::ScalarType dtype) {
  if (policy == PositionPolicy::Contiguous) std::stable_sort(blocks.begin(), blocks.end(), stream_order);
  LayerContext ctx;
  std::vector<at::Tensor> keys, values, positions;
  const auto l = static_cast<size_t>(layer);
  if (sinks.size()) {
    keys.push_back(sinks.keys[l].to(device, dtype));
    values.push_back(sinks.values[l].to(device, dtype));
    positions.push_back(sinks.positions);
  }
  int64_t next = sinks.size() ? next_position(sinks.positions) : 0;
  size_t slot = 0;
  for (const KvBlock* b : blocks) {
    if (!b->in_layer(layer))
      throw std::invalid_argument("context: block " + std::to_string(b->id) + " is not stored in layer " +
                                  std::to_string(layer));
    keys.push_back(b->keys[l].to(device, dtype));
    values.push_back(b->values[l].to(device, dtype));
    ctx.block_ids.push_back(b->id);
    if (policy != PositionPolicy::Contiguous) {
      positions.push_back(b->positions);
    } else if (slot < stream_slots.size() && stream_slots[slot].sizes() == b->positions.sizes()) {
      positions.push_back(stream_slots[slot++]);
    } else {
      positions.push_back(contiguous_positions(b->positions, next));
    }
    next = std::max(next, next_position(positions.back()));
  }
  if (keys.empty()) {
    ctx.next_position = policy == PositionPolicy::Original ? stream_end : 0;
    return ctx;
  }
  ctx.positions = at::cat(positions, 1).to(device);
  const auto tables = rope.tables(ctx.positions, dtype);
  ctx.keys = apply_rotary(at::cat(keys, 0), tables);
  ctx.values = at::cat(values, 0);
  switch (policy) {
    case PositionPolicy::Contiguous: ctx.next_position = next; break;
    case PositionPolicy::Original: ctx.next_position = std::max(next, stream_end); break;
    case PositionPolicy::Stacked: ctx.next_position = ctx.keys.size(0); break;
  }
  return ctx;
}

}  // namespace svqa
