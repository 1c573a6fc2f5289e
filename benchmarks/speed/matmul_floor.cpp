#include "benchmarks/speed/matmul_floor.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>
#include <vector>

namespace svqa {

FrameFlops frame_flops(const DecoderShape& s, int64_t tokens, int64_t keys) {
  const double t = static_cast<double>(tokens), h = static_cast<double>(s.hidden);
  const double q = static_cast<double>(s.heads * s.head_dim), kv = static_cast<double>(s.kv_heads * s.head_dim);
  const double per_layer_linear = 2 * t * (h * q + 2 * h * kv + q * h + 3 * h * static_cast<double>(s.intermediate));
  const double per_layer_attention = 2 * 2 * t * q * static_cast<double>(keys);
  return {per_layer_linear * static_cast<double>(s.layers), per_layer_attention * static_cast<double>(s.layers)};
}

MatmulFloor::MatmulFloor(DecoderShape shape, int64_t tokens, at::ScalarType dtype, at::Device device, int repeats)
    : shape_(shape), tokens_(tokens), options_(at::TensorOptions().dtype(dtype).device(device)), repeats_(repeats) {}

double fastest_seconds(const std::function<at::Tensor()>& op, int repeats) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i <= repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const at::Tensor out = op();
    if (out.is_cuda()) (void)out.flatten()[0].item<float>();  // wait for the device
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0) best = std::min(best, s);  // the first call warms up
  }
  return best;
}

double MatmulFloor::best_of(const at::Tensor& a, const at::Tensor& b, bool linear) {
  return fastest_seconds([&] { return linear ? at::linear(a, b) : at::bmm(a, b); }, repeats_);
}

double MatmulFloor::linear_seconds() {
  if (linear_ >= 0) return linear_;
  const int64_t h = shape_.hidden, q = shape_.heads * shape_.head_dim, kv = shape_.kv_heads * shape_.head_dim;
  // (input width, output width, how many per layer) of every projection, as nn.Linear holds them.
  const std::vector<std::pair<std::pair<int64_t, int64_t>, int>> projections{
      {{h, q}, 1}, {{h, kv}, 2}, {{q, h}, 1}, {{h, shape_.intermediate}, 2}, {{shape_.intermediate, h}, 1}};
  double per_layer = 0;
  for (const auto& [io, count] : projections) {
    const auto x = at::randn({tokens_, io.first}, options_), w = at::randn({io.second, io.first}, options_);
    per_layer += count * best_of(x, w, true);
  }
  return linear_ = per_layer * static_cast<double>(shape_.layers);
}

double matmul_peak_flops(at::ScalarType dtype, at::Device device, int repeats) {
  const int64_t n = 2048;
  const auto options = at::TensorOptions().dtype(dtype).device(device);
  const auto a = at::randn({n, n}, options), b = at::randn({n, n}, options);
  return 2.0 * static_cast<double>(n * n * n) / fastest_seconds([&] { return at::linear(a, b); }, repeats);
}

double MatmulFloor::peak_flops_per_second() {
  return matmul_peak_flops(options_.dtype().toScalarType(), options_.device(), repeats_);
}

double MatmulFloor::attention_seconds(int64_t keys) {
  const auto cached = attention_.find(keys);
  if (cached != attention_.end()) return cached->second;
  const int64_t kv = shape_.kv_heads, rows = tokens_ * (shape_.heads / shape_.kv_heads), d = shape_.head_dim;
  const auto q = at::randn({kv, rows, d}, options_), kt = at::randn({kv, d, keys}, options_);
  const auto p = at::randn({kv, rows, keys}, options_), v = at::randn({kv, keys, d}, options_);
  const double s = (best_of(q, kt, false) + best_of(p, v, false)) * static_cast<double>(shape_.layers);
  return attention_[keys] = s;
}

}  // namespace svqa
