#pragma once

#include <cstdint>
#include <vector>

namespace svqa {

// Indices of `k` of `n` items evenly spread (linspace(0, n-1, k) truncated, as the reference
// codes sample frames); all of them when k >= n.
std::vector<int64_t> uniform_indices(int64_t n, int64_t k);

}  // namespace svqa
