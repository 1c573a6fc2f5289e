#include "core/nn/rope.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace svqa {
namespace {

// all [3, T, d/2] → [T, d/2]: slots of t, with h at 1, 4, … < 3·section[1] and w at 2, 5, … <
// 3·section[2] (HF's Qwen3VLTextRotaryEmbedding.recomposition_frequencies).
at::Tensor interleaved_freqs(const at::Tensor& all, const std::vector<int64_t>& section) {
  auto freqs = all[0].clone();
  for (int64_t axis = 1; axis <= 2; ++axis) {
    const int64_t end = std::min<int64_t>(3 * section[static_cast<size_t>(axis)], freqs.size(1));
    const auto idx = at::arange(axis, end, 3, at::TensorOptions().dtype(at::kLong).device(all.device()));
    freqs.index_copy_(1, idx, all[axis].index_select(1, idx));
  }
  return freqs;
}

}  // namespace

RotaryEmbedding::RotaryEmbedding(int64_t head_dim, double theta, std::vector<int64_t> mrope_section, MropeLayout layout)
    : head_dim_(head_dim), mrope_section_(std::move(mrope_section)), layout_(layout) {
  if (head_dim <= 0 || head_dim % 2) throw std::invalid_argument("rope: head_dim must be even and positive");
  const int64_t sum = std::accumulate(mrope_section_.begin(), mrope_section_.end(), int64_t{0});
  if (!mrope_section_.empty() && sum != head_dim / 2)
    throw std::invalid_argument("rope: mrope_section sums to " + std::to_string(sum) + ", expected head_dim/2 = " +
                                std::to_string(head_dim / 2));
  if (layout == MropeLayout::Interleaved && mrope_section_.size() != 3)
    throw std::invalid_argument("rope: an interleaved mrope_section has 3 entries (t, h, w), got " +
                                std::to_string(mrope_section_.size()));
  // Same float32 expression as HF, so tables match bit for bit.
  const auto exponent = at::arange(0, head_dim, 2, at::kLong).to(at::kFloat) / static_cast<float>(head_dim);
  inv_freq_ = 1.0 / at::pow(at::scalar_tensor(theta, at::kFloat), exponent);
}

namespace {

// Equal positions [3, T] of one size and device: host ones read in place (at::equal returns a bool
// to the host, which on a GPU waits for the device; on the host it is an operator call for nothing).
bool same_positions(const at::Tensor& a, const at::Tensor& b) {
  if (!a.device().is_cpu() || a.scalar_type() != at::kLong || b.scalar_type() != at::kLong) return at::equal(a, b);
  const auto x = a.accessor<int64_t, 2>(), y = b.accessor<int64_t, 2>();
  for (int64_t r = 0; r < a.size(0); ++r)
    for (int64_t t = 0; t < a.size(1); ++t)
      if (x[r][t] != y[r][t]) return false;
  return true;
}

}  // namespace

RotaryTables RotaryEmbedding::tables(const at::Tensor& positions) const {
  if (positions.dim() != 2 || positions.size(0) != 3)
    throw std::invalid_argument("rope: positions must be [3, T], got " + std::to_string(positions.dim()) + "-d");
  auto& recent = *last_;
  for (size_t i = 0; i < recent.size(); ++i) {
    const Last& last = recent[i];
    if (last.positions.defined() && last.positions.device() == positions.device() &&
        last.positions.sizes() == positions.sizes() && same_positions(last.positions, positions)) {
      if (i > 0) std::swap(recent[0], recent[i]);  // the newest first
      return recent[0].tables;
    }
  }
  const auto inv = inv_freq_.to(positions.device());
  at::Tensor freqs;  // [T, head_dim / 2]
  if (mrope_section_.empty()) {
    freqs = positions[0].to(at::kFloat).unsqueeze(1) * inv.unsqueeze(0);
  } else if (layout_ == MropeLayout::Interleaved) {
    freqs = interleaved_freqs(positions.to(at::kFloat).unsqueeze(2) * inv.view({1, 1, -1}), mrope_section_);
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
  if (!positions.numel()) return 0;
  if (!positions.device().is_cpu() || positions.scalar_type() != at::kLong) return positions.max().item<int64_t>() + 1;
  // Host positions (a visual unit's): read in place, no operator call that would wait on a device.
  const auto c = positions.contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return *std::max_element(p, p + c.numel()) + 1;
}

}  // namespace svqa
