#include "strategies/kit/sink_prefill.h"

#include "engine/layer_over_context.h"
#include "models/backbones/backbone.h"
#include "models/backbones/full_context.h"

namespace svqa {

SinkKv prefill_sinks(Backbone& backbone, const std::vector<int64_t>& ids) {
  const int64_t layers = backbone.num_layers(), n = static_cast<int64_t>(ids.size());
  SinkKv sinks{std::vector<at::Tensor>(layers), std::vector<at::Tensor>(layers), text_positions(0, n)};
  if (n == 0) return sinks;
  // Plain causal attention among themselves: the pass over memory with no sinks and no memory.
  auto kv = forward_over_memory(backbone, backbone.embed(at::tensor(ids, at::kLong)), {nullptr, nullptr, {sinks.positions}});
  sinks.keys = std::move(kv.keys);
  sinks.values = std::move(kv.values);
  return sinks;
}

}  // namespace svqa
