#pragma once
// STC-Cacher (lern-to-write/STC, stc/cacher/reference_forward.py): the vision tower run layer by
// layer, a refresh frame in full, every other frame recomputing in each layer only the tokens whose
// keys moved most since the last refresh frame.
//   Refresh (frame count % refresh_interval == 0, or no reference yet): the whole layer; each layer
//   keeps the frame's keys, values, attention output (after out_proj) and MLP output as reference.
//   Otherwise, per layer: keys of every token; the ⌊N · update_ratio⌋ (at least 1) tokens least
//   cosine-similar to the reference keys are recomputed: their queries attend to every current key
//   over the reference values with theirs put in; the others take the reference's attention and MLP
//   outputs, added to their own current residual (selectors.py, _selective_key_forward).

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "models/backbones/vision_layers.h"

namespace svqa {

struct StcCacherSettings {
  double update_ratio = 0.25;
  int64_t refresh_interval = 2;
};

class StcCacher {
 public:
  explicit StcCacher(StcCacherSettings settings) : settings_(settings) {}
  // A new stream: no reference frame.
  void reset() { references_.clear(); }
  // One preprocessed frame [1, 3, S, S], the `count`-th since the count restarted → tokens [P, hidden].
  at::Tensor encode(VisionLayers& tower, const at::Tensor& pixels, int64_t count);
  // The last frame's recomputed tokens per layer (int64, ascending); empty after a refresh frame.
  const std::vector<at::Tensor>& recomputed() const { return recomputed_; }

 private:
  struct Reference {
    at::Tensor key, value, attn_out, mlp_out;  // [1, N, D]
  };
  at::Tensor full_layer(VisionLayers& tower, int64_t layer, const at::Tensor& h);
  at::Tensor selective_layer(VisionLayers& tower, int64_t layer, const at::Tensor& h);

  StcCacherSettings settings_;
  std::vector<Reference> references_;  // per layer, from the last refresh frame
  std::vector<at::Tensor> recomputed_;
};

}  // namespace svqa
