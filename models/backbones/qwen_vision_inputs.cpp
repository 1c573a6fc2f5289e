#include "models/backbones/qwen_vision_inputs.h"

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace svqa {
namespace {

at::Tensor block_diagonal_mask(const std::vector<int64_t>& lengths, int64_t n) {
  std::vector<int64_t> segment;
  segment.reserve(n);
  for (size_t s = 0; s < lengths.size(); ++s) segment.insert(segment.end(), lengths[s], static_cast<int64_t>(s));
  const auto seg = at::tensor(segment, at::kLong);
  return at::zeros({n, n}, at::kFloat)
      .masked_fill(seg.unsqueeze(1) != seg.unsqueeze(0), -std::numeric_limits<float>::infinity());
}

}  // namespace

std::pair<at::Tensor, at::Tensor> vision_patch_coordinates(int64_t grid_h, int64_t grid_w, int64_t m) {
  if (grid_h % m || grid_w % m)
    throw std::invalid_argument("qwen vision: grid " + std::to_string(grid_h) + "x" + std::to_string(grid_w) +
                                " patches is not a multiple of merge size " + std::to_string(m));
  const int64_t cells_h = grid_h / m, cells_w = grid_w / m;
  const auto opts = at::TensorOptions().dtype(at::kLong);
  auto hpos = at::arange(grid_h, opts).unsqueeze(1).expand({grid_h, grid_w});
  auto wpos = at::arange(grid_w, opts).unsqueeze(0).expand({grid_h, grid_w});
  return {hpos.reshape({cells_h, m, cells_w, m}).permute({0, 2, 1, 3}).flatten(),
          wpos.reshape({cells_h, m, cells_w, m}).permute({0, 2, 1, 3}).flatten()};
}

at::Tensor vision_axial_rotary(const at::Tensor& hpos, const at::Tensor& wpos, int64_t head_dim, double theta) {
  const int64_t spatial = head_dim / 2;
  const auto exponent = at::arange(0, spatial, 2, at::kLong).to(at::kFloat) / static_cast<float>(spatial);
  const auto inv = 1.0 / at::pow(at::scalar_tensor(theta, at::kFloat), exponent);
  const auto fh = hpos.to(at::kFloat).unsqueeze(1) * inv, fw = wpos.to(at::kFloat).unsqueeze(1) * inv;
  const auto hw = at::cat({fh, fw}, 1);
  return at::cat({hw, hw}, 1);
}

QwenVisionInputs qwen_vision_inputs(int64_t grid_h, int64_t grid_w, const QwenVisionSpec& spec) {
  const int64_t m = spec.merge_size, unit = m * m;
  const auto [hpos, wpos] = vision_patch_coordinates(grid_h, grid_w, m);
  const int64_t n = grid_h * grid_w, cells_h = grid_h / m, cells_w = grid_w / m;
  const auto opts = at::TensorOptions().dtype(at::kLong);
  const auto emb = vision_axial_rotary(hpos, wpos, spec.head_dim, spec.rope_theta);

  // Windows of `cells` × `cells` merged cells, row-major; the last row/column of windows may be partial.
  const int64_t cells = spec.window_size / m / spec.patch_size;
  std::vector<int64_t> order, window_lengths;
  for (int64_t wy = 0; wy < cells_h; wy += cells)
    for (int64_t wx = 0; wx < cells_w; wx += cells) {
      int64_t count = 0;
      for (int64_t y = wy; y < std::min(wy + cells, cells_h); ++y)
        for (int64_t x = wx; x < std::min(wx + cells, cells_w); ++x, ++count) order.push_back(y * cells_w + x);
      window_lengths.push_back(count * unit);
    }

  QwenVisionInputs in;
  in.window_index = at::tensor(order, opts);
  in.reverse_index = at::argsort(in.window_index);
  auto reorder = [&](const at::Tensor& t) { return t.reshape({n / unit, unit, -1}).index_select(0, in.window_index).reshape({n, -1}); };
  in.cos = reorder(emb.cos());
  in.sin = reorder(emb.sin());
  in.full_mask = at::zeros({n, n}, at::kFloat);  // one temporal patch: every patch sees every other
  in.window_mask = block_diagonal_mask(window_lengths, n);
  return in;
}

}  // namespace svqa
