#include "strategies/encoding/stc/stc_cacher.h"

#include <algorithm>

namespace svqa {
namespace {

// rows [1, N, D] with `index` [k]'s rows replaced by `values` [1, k, D] (a copy).
at::Tensor with_rows(const at::Tensor& rows, const at::Tensor& index, const at::Tensor& values) {
  return rows.index_copy(1, index, values);
}

}  // namespace

at::Tensor StcCacher::encode(VisionLayers& tower, const at::Tensor& pixels, int64_t count) {
  const bool refresh = references_.empty() || count % settings_.refresh_interval == 0;
  if (refresh) references_.assign(static_cast<size_t>(tower.num_layers()), {});
  recomputed_.clear();
  at::Tensor h = tower.embed(pixels);
  for (int64_t i = 0; i < tower.num_layers(); ++i) h = refresh ? full_layer(tower, i, h) : selective_layer(tower, i, h);
  const at::Tensor tokens = tower.head(h);
  return tokens.reshape({-1, tokens.size(2)});
}

at::Tensor StcCacher::full_layer(VisionLayers& tower, int64_t layer, const at::Tensor& h) {
  Reference& ref = references_[static_cast<size_t>(layer)];
  const at::Tensor x = tower.norm1(layer, h);
  ref.key = tower.k(layer, x), ref.value = tower.v(layer, x);
  ref.attn_out = tower.out(layer, vision_attention(tower.q(layer, x), ref.key, ref.value, tower.num_heads()));
  const at::Tensor mid = h + ref.attn_out;
  ref.mlp_out = tower.mlp(layer, mid);
  return mid + ref.mlp_out;
}

at::Tensor StcCacher::selective_layer(VisionLayers& tower, int64_t layer, const at::Tensor& h) {
  const Reference& ref = references_[static_cast<size_t>(layer)];
  const at::Tensor x = tower.norm1(layer, h);
  const at::Tensor key = tower.k(layer, x);
  const int64_t n = key.size(1);
  const int64_t count = std::max<int64_t>(1, std::min(static_cast<int64_t>(static_cast<double>(n) * settings_.update_ratio), n));
  const at::Tensor similarity = at::cosine_similarity(key, ref.key, -1);  // [1, N]
  const at::Tensor index = std::get<1>(similarity.topk(count, 1, /*largest=*/false)).squeeze(0);
  const at::Tensor chosen = x.index_select(1, index);
  const at::Tensor value = with_rows(ref.value, index, tower.v(layer, chosen));
  const at::Tensor attn = tower.out(layer, vision_attention(tower.q(layer, chosen), key, value, tower.num_heads()));
  const at::Tensor mid = h + with_rows(ref.attn_out, index, attn);
  const at::Tensor out = mid + with_rows(ref.mlp_out, index, tower.mlp(layer, mid.index_select(1, index)));
  recomputed_.push_back(std::get<0>(index.sort()));
  return out;
}

}  // namespace svqa
