#include "strategies/kit/uniform_indices.h"

#include <numeric>

namespace svqa {

std::vector<int64_t> uniform_indices(int64_t n, int64_t k) {
  std::vector<int64_t> out;
  if (k >= n) {
    out.resize(static_cast<size_t>(n));
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  for (int64_t i = 0; i < k; ++i)
    out.push_back(k == 1 ? 0 : static_cast<int64_t>(static_cast<double>(i) * static_cast<double>(n - 1) / static_cast<double>(k - 1)));
  return out;
}

}  // namespace svqa
