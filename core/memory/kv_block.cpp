#include "core/memory/kv_block.h"

#include "core/memory/spill_file.h"

namespace svqa {

const char* granularity_name(Granularity g) {
  switch (g) {
    case Granularity::Patch: return "patch";
    case Granularity::Frame: return "frame";
    case Granularity::Segment: return "segment";
    case Granularity::Summary: return "summary";
  }
  return "?";
}

at::Tensor mean_key_representative(const at::Tensor& keys) { return keys.to(at::kFloat).mean(0).flatten(); }

at::Tensor grouped_query(const at::Tensor& mean_query, int64_t kv_heads) {
  return mean_query.view({kv_heads, -1, mean_query.size(-1)}).sum(1).flatten();
}

int64_t KvBlock::kv_bytes() const {
  int64_t n = 0;
  for (size_t l = 0; l < keys.size(); ++l) n += tensor_bytes(keys[l]) + tensor_bytes(values[l]);
  return n;
}

KvBlock empty_block(int64_t layers, Granularity granularity, at::Tensor positions) {
  KvBlock block;
  block.granularity = granularity;
  block.positions = std::move(positions);
  block.keys.assign(static_cast<size_t>(layers), at::Tensor());
  block.values.assign(static_cast<size_t>(layers), at::Tensor());
  block.representatives.assign(static_cast<size_t>(layers), at::Tensor());
  return block;
}

void set_layer(KvBlock& block, int64_t layer, at::Tensor keys, at::Tensor values) {
  const auto l = static_cast<size_t>(layer);
  block.representatives.at(l) = mean_key_representative(keys);
  block.keys.at(l) = std::move(keys);
  block.values.at(l) = std::move(values);
}

KvBlock layer_only_block(int64_t layers, int64_t layer, LayerMemory memory, Granularity granularity) {
  KvBlock block = empty_block(layers, granularity, std::move(memory.positions));
  set_layer(block, layer, std::move(memory.keys), std::move(memory.values));
  return block;
}

}  // namespace svqa
