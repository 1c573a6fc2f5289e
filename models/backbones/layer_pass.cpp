#include "models/backbones/layer_pass.h"

#include <stdexcept>

namespace svqa {

std::vector<at::Tensor> forward_layers(Backbone& backbone, LayerPass pass) {
  auto& h = pass.hidden;
  if (!pass.deepstack.empty() && pass.deepstack.size() != h.size())
    throw std::invalid_argument("forward_layers: a DeepStack per sequence, or none");
  for (int64_t l = 0; l < backbone.num_layers(); ++l)
    for (size_t s = 0; s < h.size(); ++s) {
      const auto out = pass.attend(l, s, h[s], backbone.layer_qkv(l, h[s]));
      if (!out.defined()) return h;
      h[s] = backbone.layer_out(l, h[s], out);
      if (!pass.deepstack.empty()) h[s] = pass.deepstack[s].apply(h[s], l);
    }
  return h;
}

}  // namespace svqa
