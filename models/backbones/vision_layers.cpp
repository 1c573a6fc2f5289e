#include "models/backbones/vision_layers.h"

namespace svqa {
namespace {

at::Tensor split_heads(const at::Tensor& x, int64_t heads) {  // [F, n, D] → [F, heads, n, D/heads]
  return x.view({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}

}  // namespace

at::Tensor vision_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t heads) {
  const auto out = at::scaled_dot_product_attention(split_heads(q, heads), split_heads(k, heads), split_heads(v, heads));
  return out.transpose(1, 2).reshape({q.size(0), q.size(1), q.size(2)});
}

at::Tensor encode_layer_by_layer(VisionLayers& tower, const at::Tensor& pixels) {
  at::Tensor h = tower.embed(pixels);
  for (int64_t i = 0; i < tower.num_layers(); ++i) {
    const at::Tensor x = tower.norm1(i, h);
    h = h + tower.out(i, vision_attention(tower.q(i, x), tower.k(i, x), tower.v(i, x), tower.num_heads()));
    h = h + tower.mlp(i, h);
  }
  const at::Tensor tokens = tower.head(h);
  return tokens.reshape({-1, tokens.size(2)});
}

}  // namespace svqa
