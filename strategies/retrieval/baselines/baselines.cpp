#include "strategies/retrieval/baselines/baselines.h"

#include <numeric>

namespace svqa {

std::vector<int64_t> TimeBaseline::select(const LayerQuery& query, const MemoryBank& bank) {
  std::vector<int64_t> all, frames;  // blocks stored in this layer, and its frame blocks, in bank order
  for (int64_t id = 0; id < bank.size(); ++id) {
    if (!bank.in_layer(id, query.layer)) continue;
    all.push_back(id);
    if (bank.info(id).granularity == Granularity::Frame) frames.push_back(id);
  }
  const int64_t n = static_cast<int64_t>(frames.size());
  switch (rule_) {
    case Rule::All: return all;
    case Rule::Recent: return {frames.begin() + std::max<int64_t>(0, n - frames_), frames.end()};
    case Rule::Uniform: {
      std::vector<int64_t> out;
      for (const int64_t i : uniform_indices(n, frames_)) out.push_back(frames[static_cast<size_t>(i)]);
      return out;
    }
  }
  return all;
}

}  // namespace svqa
