#include "strategies/encoding/register_builtin.h"

#include <memory>

#include "strategies/encoding/fresh_frames.h"
#include "strategies/encoding/memstream_aks.h"
#include "strategies/encoding/mukv_multigrain.h"
#include "strategies/encoding/rekv_sliding_window.h"
#include "strategies/encoding/streamkv_segments.h"

namespace svqa {

// Every built-in encoding strategy, one line each: registry.add<Options>(name, description, factory, SVQA_HERE).
void register_builtin_encoders(Registry<EncodingStrategy>& registry) {
  registry.add<RekvOptions>("rekv_sliding_window", "ReKV: sliding-window prefill with sinks, one block per frame",
      [](const RekvOptions& o) { return std::make_unique<RekvSlidingWindow>(o); }, SVQA_HERE);
  registry.add<MukvOptions>("mukv_multigrain", "MuKV: patch/frame/segment blocks, each prefilled alone, dual-signal token compression",
      [](const MukvOptions& o) { return std::make_unique<MukvMultigrain>(o); }, SVQA_HERE);
  registry.add<StreamkvOptions>("streamkv_segments",
      "StreamKV: semantic segments with summary frames, guidance-prompt compression per layer",
      [](const StreamkvOptions& o) { return std::make_unique<StreamkvSegments>(o); }, SVQA_HERE);
  registry.add<MemstreamAksOptions>("memstream_aks", "Mem-Stream: ReKV's window thinned by Adaptive Key Selection",
      [](const MemstreamAksOptions& o) { return std::make_unique<MemstreamAks>(o); }, SVQA_HERE);
  registry.add<FreshFramesOptions>("fresh_frames",
      "no memory: N frames (uniform over the past, or the last N) fed fresh to the plain model at each question",
      [](const FreshFramesOptions& o) { return std::make_unique<FreshFrames>(o); }, SVQA_HERE);
}

}  // namespace svqa
