#include "core/nn/rope.h"

#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace svqa {

RotaryEmbedding::RotaryEmbedding(int64_t head_dim, double theta, std::vector<int64_t> mrope_section)
    : head_dim_(head_dim), mrope_section_(std::move(mrope_section)) {
  if (head_dim <= 0 || head_dim % 2) throw std::invalid_argument("rope: head_dim must be even and positive");
  const int64_t sum = std::accumulate(mrope_section_.begin(), mrope_section_.end(), int64_t{0});
  if (!mrope_section_.empty() && sum != head_dim / 2)
    throw std::invalid_argument("rope: mrope_section sums to " + std::to_string(sum) + ", expected head_dim/2 = " +
                                std::to_string(head_dim / 2));
  // Same float32 expression as HF, so tables match bit for bit.
  const auto exponent = at::arange(0, head_dim, 2, at::kLong).to(at::kFloat) / static_cast<float>(head_dim);
  inv_freq_ = 1.0 / at::pow(at::scalar_tensor(theta, at::kFloat), exponent);
}

RotaryTables RotaryEmbedding::tables(const at::Tensor& positions) const {
  if (positions.dim() != 2 || positions.size(0) != 3)
    throw std::invalid_argument("rope: positions must be [3, T], got " + std::to_string(positions.dim()) + "-d");
  auto& recent = *last_;
  for (size_t i = 0; i < recent.size(); ++i) {
    const Last& last = recent[i];
    if (last.positions.defined() && last.positions.device() == positions.device() &&
        last.positions.sizes() == positions.sizes() && at::equal(last.positions, positions)) {
      if (i > 0) std::swap(recent[0], recent[i]);  // the newest first
      return recent[0].tables;
    }
  }
  const auto inv = inv_freq_.to(positions.device());
  at::Tensor freqs;  // [T, head_dim / 2]
  if (mrope_section_.empty()) {
    freqs = positions[0].to(at::kFloat).unsqueeze(1) * inv.unsqueeze(0);
  } else {
    const auto all = positions.to(at::kFloat).unsqueeze(2) * inv.view({1, 1, -1});  // [3, T, d/2]
    std::vector<at::Tensor> parts;
    int64_t begin = 0;
    for (size_t i = 0; i < mrope_section_.size(); ++i) {
      parts.push_back(all[static_cast<int64_t>(i % 3)].narrow(1, begin, mrope_section_[i]));
      begin += mrope_section_[i];
    }
    freqs = at::cat(parts, 1);
  }
  const auto emb = at::cat({freqs, freqs}, 1);
  recent[1] = std::move(recent[0]);
  recent[0] = {positions.clone(), {emb.cos(), emb.sin()}};
  return recent[0].tables;
}

at::Tensor apply_rotary(const at::Tensor& x, const RotaryTables& t) {
  const int64_t half = x.size(-1) / 2;
  const auto xf = x.to(at::kFloat);
  const auto rotated = at::cat({-xf.narrow(-1, half, half), xf.narrow(-1, 0, half)}, -1);
  const auto cos = t.cos.unsqueeze(1), sin = t.sin.unsqueeze(1);
  return (xf * cos + rotated * sin).to(x.scalar_type());
}

void apply_rotary_(const at::Tensor& x, const RotaryTables& t) {
  if (x.scalar_type() != at::kFloat) {  // computed in float32, written back in x's dtype
    x.copy_(apply_rotary(x, t));
    return;
  }
  const int64_t half = x.size(-1) / 2;
  auto x1 = x.narrow(-1, 0, half), x2 = x.narrow(-1, half, half);
  // Both halves of a table row are equal (the frequencies are repeated), so each half's own
  // slice serves: [x1·c − x2·s, x2·c + x1·s].
  const auto cos = t.cos.narrow(-1, 0, half).unsqueeze(1), sin = t.sin.narrow(-1, 0, half).unsqueeze(1);
  const auto first = x1.clone();
  x1.mul_(cos).addcmul_(x2, sin, -1);
  x2.mul_(cos).addcmul_(first, sin);
}

at::Tensor text_positions(int64_t start, int64_t n, at::Device device) {
  return at::arange(start, start + n, at::TensorOptions().dtype(at::kLong).device(device)).unsqueeze(0).expand({3, n});
}

int64_t next_position(const at::Tensor& positions) {
  return positions.numel() ? positions.max().item<int64_t>() + 1 : 0;
}

}  // namespace svqa
