#include "strategies/retrieval/register_builtin.h"

#include <functional>
#include <memory>

#include "engine/memory_contract.h"
#include "strategies/retrieval/baselines/baselines.h"
#include "strategies/retrieval/external/external.h"
#include "strategies/retrieval/internal/internal.h"
#include "strategies/retrieval/memory_as_is/memory_as_is.h"
#include "strategies/retrieval/mukv/mukv_semi_hierarchical.h"
#include "strategies/retrieval/rrf_mixture/rrf_mixture.h"
#include "strategies/retrieval/streamkv/streamkv_layer_adaptive.h"

namespace svqa {
namespace {

template <class Options>
std::function<RetrievalNeeds(const Options&)> needs(RetrievalNeeds n) {
  return [n](const Options&) { return n; };
}

// MuKV's rotated last-layer representatives; blocks of a granularity with k > 0; segments for the
// hierarchical mode (it takes frames and patches only from inside the best segments).
RetrievalNeeds mukv_needs(const MukvRetrievalOptions& o) {
  RetrievalNeeds n{Representatives::RotatedKeyLastLayer, {}, {}};
  if (o.blocks.patch > 0) n.any_of.insert(Granularity::Patch);
  if (o.blocks.frame > 0) n.any_of.insert(Granularity::Frame);
  if (o.blocks.segment > 0) n.any_of.insert(Granularity::Segment);
  if (o.mode == "hierarchical") n.all_of.insert(Granularity::Segment);
  return n;
}

}  // namespace

// Every built-in retrieval strategy, one line each: registry.add<Options>(name, description, factory, SVQA_HERE,
// what it reads from the encoder's blocks: engine/memory_contract.h).
void register_builtin_retrievers(Registry<RetrievalStrategy, const RuntimeOptions&>& registry) {
  using Rule = TimeBaseline::Rule;
  const RetrievalNeeds rekv_keys{Representatives::MeanKeyEveryLayer, {}, {}};
  const RetrievalNeeds anything{Representatives::None, {}, {}};
  const RetrievalNeeds frame_blocks{Representatives::None, {}, {Granularity::Frame}};
  registry.add<InternalRetrievalOptions>("internal", "ReKV: per-layer mean question query vs. each block's mean key",
      [](const InternalRetrievalOptions& o) { return std::make_unique<InternalRetrieval>(o); }, SVQA_HERE,
      needs<InternalRetrievalOptions>(rekv_keys));
  registry.add<MukvRetrievalOptions>("mukv_semi_hierarchical", "MuKV: one question vector, per-granularity cosine, segment-context rerank",
      [](const MukvRetrievalOptions& o) { return std::make_unique<MukvRetrieval>(o); }, SVQA_HERE,
      std::function<RetrievalNeeds(const MukvRetrievalOptions&)>(mukv_needs));
  registry.add<ExternalRetrievalOptions>("external", "ReKV's external baseline: SigLIP frame/question cosine",
      [](const ExternalRetrievalOptions& o) { return std::make_unique<ExternalRetrieval>(o); }, SVQA_HERE,
      needs<ExternalRetrievalOptions>(anything));
  registry.add<RrfMixtureOptions>("rrf_mixture", "Mem-Stream: per-layer RRF of internal and external (PE-Core/CLIP) rankings",
      [](const RrfMixtureOptions& o) { return std::make_unique<RrfMixture>(o); }, SVQA_HERE,
      needs<RrfMixtureOptions>(rekv_keys));
  registry.add<FullContextOptions>("full_context", "every block at every layer: the full-context reference",
      [](const FullContextOptions&) { return std::make_unique<TimeBaseline>(Rule::All, 0); }, SVQA_HERE,
      needs<FullContextOptions>(anything));
  registry.add<MemoryAsIsOptions>("memory_as_is", "no retrieval: every block each layer stores, in stored order (InfiniPot-V, HERMES)",
      [](const MemoryAsIsOptions&) { return std::make_unique<MemoryAsIs>(); }, SVQA_HERE, needs<MemoryAsIsOptions>(anything));
  registry.add<FrameCountOptions>("bank_uniform",
      "k frame blocks of the stream's bank evenly spread over the past (not the papers' uniform-sampling baseline: encoding fresh_frames)",
      [](const FrameCountOptions& o) { return std::make_unique<TimeBaseline>(Rule::Uniform, o.retrieve_size); }, SVQA_HERE,
      needs<FrameCountOptions>(frame_blocks));
  registry.add<StreamkvRetrievalOptions>("streamkv_layer_adaptive",
      "StreamKV: probe pass, then layer-adaptive counts per layer (recent blocks plus the best older ones)",
      [](const StreamkvRetrievalOptions& o) { return std::make_unique<StreamkvLayerAdaptive>(o); }, SVQA_HERE,
      needs<StreamkvRetrievalOptions>(rekv_keys));
  registry.add<FrameCountOptions>("bank_recent",
      "the last k frame blocks of the stream's bank (not SimpleStream's recent frames: encoding fresh_frames)",
      [](const FrameCountOptions& o) { return std::make_unique<TimeBaseline>(Rule::Recent, o.retrieve_size); }, SVQA_HERE,
      needs<FrameCountOptions>(frame_blocks));
  // The old names read as the papers' no-memory baselines, which they are not.
  registry.retire("uniform", "bank_uniform",
                  "it picks blocks of the stream's sliding-window bank; the papers' uniform sampling (the plain model "
                  "on N frames of [0, t]) is encoding fresh_frames with sampling: uniform and retrieval full_context");
  registry.retire("recent", "bank_recent",
                  "it picks the last blocks of the stream's sliding-window bank; SimpleStream's baseline (the plain "
                  "model on the last N frames) is encoding fresh_frames with sampling: recent and retrieval full_context");
}

}  // namespace svqa
