#include "core/memory/context_assembler.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <stdexcept>

namespace svqa {
namespace {

// Where the chosen blocks' K/V for the layer come from: block i's key shape [n, kv_heads, d], and
// a copy of its K/V into given slots.
struct BlockSource {
  std::function<std::vector<int64_t>(size_t i)> shape;
  std::function<void(size_t i, const at::Tensor& k, const at::Tensor& v)> read;
};

// Sinks and blocks written once into one buffer (room left for `room` more tokens), then rotated
// in place: no per-block copies, no concatenation.
LayerContext assemble(int64_t layer, const SinkKv& sinks, const std::vector<const KvBlock*>& blocks,
                      const BlockSource& source, PositionPolicy policy, int64_t stream_end,
                      const std::vector<at::Tensor>& stream_slots, const RotaryEmbedding& rope, at::Device device,
                      at::ScalarType dtype, int64_t room) {
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (policy == PositionPolicy::Contiguous)
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return stream_order(blocks[a], blocks[b]); });
  const auto l = static_cast<size_t>(layer);
  std::vector<at::Tensor> positions;
  int64_t total = sinks.size();
  if (sinks.size()) positions.push_back(sinks.positions);
  int64_t next = sinks.size() ? next_position(sinks.positions) : 0;
  size_t slot = 0;
  LayerContext ctx;
  for (const size_t i : order) {
    const KvBlock* b = blocks[i];
    ctx.block_ids.push_back(b->id);
    if (policy != PositionPolicy::Contiguous) {
      positions.push_back(b->positions);
    } else if (slot < stream_slots.size() && stream_slots[slot].sizes() == b->positions.sizes()) {
      positions.push_back(stream_slots[slot++]);
    } else {
      positions.push_back(contiguous_positions(b->positions, next));
    }
    next = std::max(next, next_position(positions.back()));
    total += b->num_tokens();
  }
  if (total == 0) {
    ctx.next_position = policy == PositionPolicy::Original ? stream_end : 0;
    return ctx;
  }
  // One buffer shaped like the sinks (or the first block), with room for what follows.
  const auto shape = sinks.size() ? sinks.keys[l].sizes().vec() : source.shape(order.front());
  ctx.kv = KvCache(total + room, shape[1], shape[2], at::TensorOptions().dtype(dtype).device(device));
  if (sinks.size()) ctx.kv.append(sinks.keys[l], sinks.values[l]);
  for (const size_t i : order) {
    auto [k, v] = ctx.kv.extend(blocks[i]->num_tokens());
    source.read(i, k, v);
  }
  ctx.positions = at::cat(positions, 1).to(device);
  apply_rotary_(ctx.kv.keys(), rope.tables(ctx.positions));
  ctx.keys = ctx.kv.keys();
  ctx.values = ctx.kv.values();
  switch (policy) {
    case PositionPolicy::Contiguous: ctx.next_position = next; break;
    case PositionPolicy::Original: ctx.next_position = std::max(next, stream_end); break;
    case PositionPolicy::Stacked: ctx.next_position = total; break;
  }
  return ctx;
}

}  // namespace

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
                            const RotaryEmbedding& rope, at::Device device, at::ScalarType dtype, int64_t room) {
  const auto l = static_cast<size_t>(layer);
  for (const KvBlock* b : blocks)
    if (!b->in_layer(layer))
      throw std::invalid_argument("context: block " + std::to_string(b->id) + " is not stored in layer " +
                                  std::to_string(layer));
  const BlockSource source{[&](size_t i) { return blocks[i]->keys[l].sizes().vec(); },
                           [&](size_t i, const at::Tensor& k, const at::Tensor& v) {
                             k.copy_(blocks[i]->keys[l]);
                             v.copy_(blocks[i]->values[l]);
                           }};
  return assemble(layer, sinks, blocks, source, policy, stream_end, stream_slots, rope, device, dtype, room);
}

LayerContext assemble_layer(int64_t layer, const SinkKv& sinks, const MemoryBank& bank, const std::vector<int64_t>& ids,
                            PositionPolicy policy, int64_t stream_end, const std::vector<at::Tensor>& stream_slots,
                            const RotaryEmbedding& rope, at::Device device, at::ScalarType dtype, int64_t room) {
  std::vector<const KvBlock*> blocks;
  for (const int64_t id : ids) {
    if (!bank.in_layer(id, layer))
      throw std::invalid_argument("context: block " + std::to_string(id) + " is not stored in layer " +
                                  std::to_string(layer));
    blocks.push_back(&bank.info(id));
  }
  const BlockSource source{[&](size_t i) { return bank.key_shape(ids[i], layer); },
                           [&](size_t i, const at::Tensor& k, const at::Tensor& v) { bank.read_layer(ids[i], layer, k, v); }};
  return assemble(layer, sinks, blocks, source, policy, stream_end, stream_slots, rope, device, dtype, room);
}

}  // namespace svqa
