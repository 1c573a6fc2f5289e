#include "core/config/runtime.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <stdexcept>

namespace svqa {

c10::Device require_device_support(const std::string& device, const std::string& key) {
  const c10::Device d(device.empty() ? "cpu" : device);
  const bool cuda = d.is_cuda(), mps = d.is_mps();
  if ((cuda && !at::hasCUDA()) || (mps && !at::hasMPS()))
    throw std::runtime_error(key + ": " + device + ": this LibTorch was built without " + (cuda ? "CUDA" : "MPS") +
                             " (a CPU-only build); use cpu, or build svqa against a LibTorch with " +
                             (cuda ? "CUDA" : "MPS") + " (docs/development.md)");
  return d;
}

c10::Device runtime_device(const RuntimeOptions& o) { return require_device_support(o.device, "runtime.device"); }

c10::ScalarType runtime_dtype(const RuntimeOptions& o) {
  if (o.dtype == "float16") return at::kHalf;
  if (o.dtype == "bfloat16") return at::kBFloat16;
  return at::kFloat;
}

void apply_runtime(const RuntimeOptions& o) {
  if (o.threads > 0) at::set_num_threads(static_cast<int>(o.threads));
  at::manual_seed(static_cast<uint64_t>(o.seed));
}

}  // namespace svqa
