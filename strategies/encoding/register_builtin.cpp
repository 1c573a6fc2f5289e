#include "strategies/encoding/register_builtin.h"

#include <algorithm>
#include <functional>
#include <memory>

#include "engine/memory_contract.h"
#include "strategies/encoding/fresh_frames/fresh_frames.h"
#include "strategies/encoding/hermes/hermes.h"
#include "strategies/encoding/infinipot_v/infinipot_v.h"
#include "strategies/encoding/memstream/memstream_aks.h"
#include "strategies/encoding/mukv/mukv_multigrain.h"
#include "strategies/kit/rekv_sliding_window.h"
#include "strategies/encoding/streamkv/streamkv_segments.h"
#include "strategies/encoding/stc/stc.h"
#include "strategies/encoding/streamingtom/streamingtom.h"

namespace svqa {
namespace {

// ReKV's frame blocks with a mean-key representative in every layer (Mem-Stream stores the same).
EncoderProvides rekv_frames() { return {Representatives::MeanKeyEveryLayer, {Granularity::Frame}}; }

EncoderProvides mukv_provides(const MukvOptions& o) {
  EncoderProvides p{Representatives::RotatedKeyLastLayer, {}};
  for (const auto g : {Granularity::Patch, Granularity::Frame, Granularity::Segment})
    if (std::count(o.granularities.begin(), o.granularities.end(), granularity_name(g))) p.granularities.insert(g);
  return p;
}

EncoderProvides streamkv_provides(const StreamkvOptions& o) {
  EncoderProvides p = rekv_frames();
  if (o.summary) p.granularities.insert(Granularity::Summary);
  return p;
}

}  // namespace

// Every built-in encoding strategy, one line each: registry.add<Options>(name, description, factory, SVQA_HERE,
// what its blocks provide to retrieval: engine/memory_contract.h); a strategy whose memory depends on a
// runtime leaf (a seed) declares it (registry.declare_reads: engine/declared_reads.h), or is not given it.
void register_builtin_encoders(Registry<EncodingStrategy, const RuntimeOptions&>& registry) {
  using Provides = std::function<EncoderProvides(const RekvOptions&)>;
  registry.add<RekvOptions>("rekv_sliding_window", "ReKV: sliding-window prefill with sinks, one block per frame",
      [](const RekvOptions& o) { return std::make_unique<RekvSlidingWindow>(o); }, SVQA_HERE,
      Provides([](const RekvOptions&) { return rekv_frames(); }));
  registry.add<MukvOptions>("mukv_multigrain", "MuKV: patch/frame/segment blocks, each prefilled alone, dual-signal token compression",
      [](const MukvOptions& o) { return std::make_unique<MukvMultigrain>(o); }, SVQA_HERE,
      std::function<EncoderProvides(const MukvOptions&)>(mukv_provides));
  registry.add<StreamkvOptions>("streamkv_segments",
      "StreamKV: semantic segments with summary frames, guidance-prompt compression per layer",
      [](const StreamkvOptions& o) { return std::make_unique<StreamkvSegments>(o); }, SVQA_HERE,
      std::function<EncoderProvides(const StreamkvOptions&)>(streamkv_provides));
  registry.add<MemstreamAksOptions>("memstream_aks", "Mem-Stream: ReKV's window thinned by Adaptive Key Selection",
      [](const MemstreamAksOptions& o) { return std::make_unique<MemstreamAks>(o); }, SVQA_HERE,
      std::function<EncoderProvides(const MemstreamAksOptions&)>([](const MemstreamAksOptions&) { return rekv_frames(); }));
  registry.add<StreamingtomOptions>("streamingtom", "StreamingTOM: each frame cut to 50 tokens by causal temporal reduction before the LLM, then ReKV's window", make_streamingtom, SVQA_HERE, std::function<EncoderProvides(const StreamingtomOptions&)>([](const StreamingtomOptions&) { return rekv_frames(); }));
  registry.declare_reads("streamingtom", {"runtime.seed"});  // the CTR's tie-break noise
  registry.add<StcOptions>("stc", "STC: the vision tower recomputing only changed tokens per layer (STC-Cacher), each frame cut to 64 tokens (STC-Pruner), then ReKV's window", make_stc, SVQA_HERE, std::function<EncoderProvides(const StcOptions&)>([](const StcOptions&) { return rekv_frames(); }));
  registry.add<InfinipotVOptions>("infinipot_v", "InfiniPot-V: the KV cache compacted in place at a frame cap by TaR + VaN, no question needed",
      [](const InfinipotVOptions& o) { return std::make_unique<InfinipotV>(o); }, SVQA_HERE,
      std::function<EncoderProvides(const InfinipotVOptions&)>([](const InfinipotVOptions&) {
        return EncoderProvides{Representatives::MeanKeyEveryLayer, {Granularity::Frame, Granularity::Segment}, true}; }));
  registry.add<HermesOptions>("hermes", "HERMES: the KV cache as layered memory under a per-layer budget (recent frames shallow, anchors + a summary deep), no retrieval", [](const HermesOptions& o) { return std::make_unique<Hermes>(o); }, SVQA_HERE, std::function<EncoderProvides(const HermesOptions&)>([](const HermesOptions&) { return EncoderProvides{Representatives::MeanKeyEveryLayer, {Granularity::Frame, Granularity::Segment}, true}; }));
  registry.add<FreshFramesOptions>("fresh_frames",
      "no memory: N frames (uniform over the past, or the last N) fed fresh to the plain model at each question",
      [](const FreshFramesOptions& o) { return std::make_unique<FreshFrames>(o); }, SVQA_HERE,
      std::function<EncoderProvides(const FreshFramesOptions&)>([](const FreshFramesOptions&) { return rekv_frames(); }));
}

}  // namespace svqa
