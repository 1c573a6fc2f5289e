#include "benchmarks/speed/vision_floor.h"

#include <tuple>

#include "benchmarks/speed/matmul_floor.h"

namespace svqa {

std::vector<LinearShape> vision_linears(const std::map<std::string, at::Tensor>& weights, int64_t patches,
                                        int64_t merge) {
  std::vector<LinearShape> out;
  for (const auto& [name, w] : weights) {
    const bool lookup = name.find("position_embedding") != std::string::npos || name.find("pos_embed") != std::string::npos;
    if (w.dim() < 2 || lookup || name.size() < 7 || name.compare(name.size() - 7, 7, ".weight") != 0) continue;
    const bool merged = name.find("merger") != std::string::npos;
    out.push_back({merged ? patches / (merge * merge) : patches, w[0].numel(), w.size(0)});
  }
  return out;
}

double linear_flops(const std::vector<LinearShape>& shapes) {
  double flops = 0;
  for (const auto& s : shapes) flops += 2.0 * static_cast<double>(s.tokens) * static_cast<double>(s.in * s.out);
  return flops;
}

double linear_floor_seconds(const std::vector<LinearShape>& shapes, at::ScalarType dtype, at::Device device,
                            int repeats) {
  const auto options = at::TensorOptions().dtype(dtype).device(device);
  std::map<std::tuple<int64_t, int64_t, int64_t>, double> timed;
  double total = 0;
  for (const auto& s : shapes) {
    const auto key = std::make_tuple(s.tokens, s.in, s.out);
    auto it = timed.find(key);
    if (it == timed.end()) {
      const auto x = at::randn({s.tokens, s.in}, options), w = at::randn({s.out, s.in}, options);
      it = timed.emplace(key, fastest_seconds([&] { return at::linear(x, w); }, repeats)).first;
    }
    total += it->second;
  }
  return total;
}

}  // namespace svqa
