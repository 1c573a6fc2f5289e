#include "app/run/context_window.h"

#include <algorithm>

namespace svqa {

double window_start(double time, double window_s) { return window_s > 0 ? std::max(0.0, time - window_s) : 0.0; }

std::unique_ptr<MemoryBank> blocks_from(const MemoryBank& bank, double start, const MemoryBankOptions& options) {
  auto out = std::make_unique<MemoryBank>(options);
  for (int64_t id = 0; id < bank.size(); ++id) {
    if (bank.info(id).start_time < start) continue;
    KvBlock b = bank.block(id);  // K/V resident or mapped back from its spill file
    b.representatives.assign(static_cast<size_t>(options.num_layers), at::Tensor());
    for (int64_t l = 0; l < options.num_layers; ++l)
      if (const at::Tensor rep = bank.representative(id, l); rep.defined()) b.representatives[l] = rep;
    out->add(std::move(b));
  }
  return out;
}

}  // namespace svqa
