#pragma once
// The matrix-multiply floor of encoding one frame: its FLOPs (q/k/v/o projections, the gated MLP,
// attention scores and weighted values over the keys it sees) at this machine's measured matmul
// rate for the same shapes, dtype, device and thread count. An encoder can only beat it by doing
// less arithmetic.

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <map>

namespace svqa {

// The fastest of `repeats` calls of `op` after one warm-up call, waiting for the device each time.
double fastest_seconds(const std::function<at::Tensor()>& op, int repeats);

struct DecoderShape {
  int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0;
};

struct FrameFlops {
  double linear = 0;     // projections and MLP, all layers
  double attention = 0;  // q·kᵀ and p·v over `keys` keys, all layers
  double total() const { return linear + attention; }
};

// A frame of `tokens` tokens whose queries see `keys` keys (their own included).
FrameFlops frame_flops(const DecoderShape& shape, int64_t tokens, int64_t keys);

// FLOP/s of one large square matmul (2048³), fastest of `repeats` after a warm-up call.
double matmul_peak_flops(at::ScalarType dtype, at::Device device, int repeats = 3);

class MatmulFloor {
 public:
  // Each shape is timed `repeats` times after one warm-up call; the fastest counts.
  MatmulFloor(DecoderShape shape, int64_t tokens, at::ScalarType dtype, at::Device device, int repeats = 3);

  // Seconds for one frame's projections and MLP, all layers.
  double linear_seconds();
  // Seconds for one frame's attention over `keys` keys, all layers: grouped-query heads batched
  // per kv head ([kv, group·tokens, d] × [kv, d, keys], then × [kv, keys, d]). Cached per `keys`.
  double attention_seconds(int64_t keys);
  double seconds(int64_t keys) { return linear_seconds() + attention_seconds(keys); }
  // matmul_peak_flops at this dtype and device: what the machine does at best. Attention at these
  // shapes (inner dimension head_dim) runs well below it as a plain bmm, and a fused kernel that
  // never writes the score matrix can beat the per-shape floor above; this one it cannot.
  double peak_flops_per_second();

 private:
  double best_of(const at::Tensor& a, const at::Tensor& b, bool linear);

  DecoderShape shape_;
  int64_t tokens_;
  at::TensorOptions options_;
  int repeats_;
  double linear_ = -1;
  std::map<int64_t, double> attention_;
};

}  // namespace svqa
