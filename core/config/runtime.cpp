#include "core/config/runtime.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

namespace svqa {

c10::Device runtime_device(const RuntimeOptions& o) { return c10::Device(o.device); }

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
