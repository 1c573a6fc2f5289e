#pragma once
// The matrix-multiply floor of the vision tower on one visual unit: every projection and MLP of the
// exported tower (its weights of rank ≥ 2, convolutions as the matmul they are per patch), each at the
// tokens it sees, timed at this machine's rate for the same shapes. Attention is left out (at
// SigLIP's 729 patches it is ~10 % of the tower's FLOPs; less in Qwen's 112-px windows): the floor is
// a little low, never high.

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace svqa {

struct LinearShape {
  int64_t tokens = 0, in = 0, out = 0;
};

// The tower's matmuls for one unit of `patches` patches: weights named *merger* (Qwen's patch merger)
// see patches / merge², the rest every patch; lookup tables (position embeddings) are not matmuls.
std::vector<LinearShape> vision_linears(const std::map<std::string, at::Tensor>& weights, int64_t patches,
                                        int64_t merge);

double linear_flops(const std::vector<LinearShape>& shapes);

// Seconds for all of `shapes` at the measured rate of each distinct shape (fastest of `repeats`).
double linear_floor_seconds(const std::vector<LinearShape>& shapes, at::ScalarType dtype, at::Device device,
                            int repeats = 3);

}  // namespace svqa
