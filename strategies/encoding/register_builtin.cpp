#include "strategies/encoding/register_builtin.h"

#include <algorithm>
#include <functional>
#include <memory>

#include "engine/memory_contract.h"
#include "engine/registries.h"
#include "strategies/encoding/fluxmem/fluxmem.h"
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

// ReKV's frame blocks with a mean-key representative in every layer (Mem-Stream stores the same), appended
// as frames come: the default traits.
EncoderProvides rekv_frames() { return {Representatives::MeanKeyEveryLayer, {Granularity::Frame}}; }

// ReKV's window, answering past n_local context tokens as it encodes (answer_fallback).
EncoderProvides rekv_window(const RekvOptions& o) {
  EncoderProvides p = rekv_frames();
  p.traits.answer_window = o.answer_fallback ? o.n_local : 0;
  return p;
}

EncoderProvides mukv_provides(const MukvOptions& o) {
  EncoderProvides p{Representatives::RotatedKeyLastLayer, {}};
  for (const auto g : {Granularity::Patch, Granularity::Frame, Granularity::Segment})
    if (std::count(o.granularities.begin(), o.granularities.end(), granularity_name(g))) p.granularities.insert(g);
  // The reference's layout (blocks overlapping after the sinks, the question after the context's
  // length) is defined for 1-D RoPE only; mRoPE takes time order, back to back.
  const bool same_granularity = o.context == "same_granularity";
  p.traits.position_policy = same_granularity ? PositionPolicy::Original : PositionPolicy::Stacked;
  if (!same_granularity) p.traits.mrope_position_policy = PositionPolicy::Contiguous;
  p.traits.blocks_tile_stream = false;  // three overlapping views of one stream
  return p;
}

EncoderProvides streamkv_provides(const StreamkvOptions& o) {
  EncoderProvides p = rekv_frames();
  if (o.summary) p.granularities.insert(Granularity::Summary);
  // A frame no layer keeps is not stored but held its encode positions: the bank's blocks leave
  // gaps, so `contiguous` lays the chosen blocks one after the other (the reference's re-indexing).
  p.traits.blocks_tile_stream = false;
  return p;
}

// A cache compacted in place (HERMES, InfiniPot-V): blocks spanning the whole past, evicted and rebuilt,
// each token answered at the position it was encoded at (the references keep their caches rotated).
EncoderProvides compacted_in_place() {
  EncoderProvides p{Representatives::MeanKeyEveryLayer, {Granularity::Frame, Granularity::Segment}, true};
  p.traits.memory = MemoryWrites::Rewrites;
  p.traits.position_policy = PositionPolicy::Original;
  p.traits.blocks_tile_stream = false;  // a layer's compacted block holds tokens from across the stream
  return p;
}

// No stream memory: frames fed fresh at each question (fresh_frames, FluxMem): the memory is built there, vision runs there.
EncoderProvides question_time_frames() {
  EncoderProvides p = rekv_frames();
  p.traits.memory = MemoryWrites::AtQuestion;
  p.traits.reads_visual_tokens = false;  // vision runs at the question
  return p;
}

}  // namespace

// Every built-in encoding strategy, one line each: registry.add<Options>(name, description, factory, SVQA_HERE,
// what its blocks provide to retrieval and, in its traits, what it does to memory: engine/memory_contract.h);
// a strategy whose memory depends on a runtime leaf (a seed) declares it (registry.declare_reads:
// engine/declared_reads.h), or is not given it.
void register_builtin_encoders(Registry<EncodingStrategy, const RuntimeOptions&>& registry) {
  using Provides = std::function<EncoderProvides(const RekvOptions&)>;
  registry.add<RekvOptions>("rekv_sliding_window", "ReKV: sliding-window prefill with sinks, one block per frame",
      [](const RekvOptions& o) { return std::make_unique<RekvSlidingWindow>(o); }, SVQA_HERE,
      Provides(rekv_window));
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
  registry.add<StcOptions>("stc", "STC: the vision tower recomputing only changed tokens per layer (STC-Cacher), each frame cut to 64 tokens (STC-Pruner), then ReKV's window", make_stc, SVQA_HERE, std::function<EncoderProvides(const StcOptions&)>(stc_provides));
  registry.add<InfinipotVOptions>("infinipot_v", "InfiniPot-V: the KV cache compacted in place at a frame cap by TaR + VaN, no question needed",
      [](const InfinipotVOptions& o) { return std::make_unique<InfinipotV>(o); }, SVQA_HERE,
      std::function<EncoderProvides(const InfinipotVOptions&)>([](const InfinipotVOptions&) { return compacted_in_place(); }));
  registry.add<HermesOptions>("hermes", "HERMES: the KV cache as layered memory under a per-layer budget (recent frames shallow, anchors + a summary deep), no retrieval", [](const HermesOptions& o) { return std::make_unique<Hermes>(o); }, SVQA_HERE, std::function<EncoderProvides(const HermesOptions&)>([](const HermesOptions&) { return compacted_in_place(); }));
  registry.add<FreshFramesOptions>("fresh_frames",
      "no memory: N frames (uniform over the past, or the last N) fed fresh to the plain model at each question",
      [](const FreshFramesOptions& o) { return std::make_unique<FreshFrames>(o); }, SVQA_HERE,
      std::function<EncoderProvides(const FreshFramesOptions&)>([](const FreshFramesOptions&) { return question_time_frames(); }));
  registry.add<FluxmemOptions>("fluxmem", "FluxMem: at each question the last frames' tokens pruned in time and merged in space before the LLM, then the plain model on what is left", [](const FluxmemOptions& o) { return std::make_unique<Fluxmem>(o); }, SVQA_HERE, std::function<EncoderProvides(const FluxmemOptions&)>([](const FluxmemOptions&) { return question_time_frames(); }));
}

EncoderTraits builtin_encoder_traits(const std::string& name, const std::any& options) {
  Registry<EncodingStrategy, const RuntimeOptions&> registry("encoding strategy");
  register_builtin_encoders(registry);
  return encoder_traits(registry, name, options);
}

}  // namespace svqa
