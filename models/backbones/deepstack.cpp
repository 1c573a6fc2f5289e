#include "models/backbones/deepstack.h"

#include <stdexcept>

namespace svqa {

at::Tensor DeepStack::apply(const at::Tensor& h, int64_t layer) const {
  if (layer < 0 || layer >= layers()) return h;
  if (!rows.defined()) return h + features[layer].to(h.device(), h.dtype());
  const auto r = rows.to(h.device());
  return h.index_put({r}, h.index_select(0, r) + features[layer].to(h.device(), h.dtype()));
}

DeepStack deepstack_slice(const at::Tensor& all, int64_t begin, int64_t n, int64_t row) {
  if (!all.defined() || all.size(0) == 0) return {};
  return {all.narrow(1, begin, n), at::arange(row, row + n, at::kLong)};
}

DeepStack concat_deepstack(const std::vector<DeepStack>& parts) {
  // A part with all rows (rows undefined) is not placed in a sequence: refuse rather than guess.
  for (const auto& p : parts)
    if (!p.empty() && !p.rows.defined())
      throw std::invalid_argument("concat_deepstack: a part without rows cannot be placed");
  std::vector<at::Tensor> features, rows;
  for (const auto& p : parts)
    if (!p.empty()) {
      features.push_back(p.features);
      rows.push_back(p.rows);
    }
  if (features.empty()) return {};
  return {at::cat(features, 1), at::cat(rows, 0)};
}

}  // namespace svqa
