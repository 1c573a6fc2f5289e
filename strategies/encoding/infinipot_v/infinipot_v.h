#pragma once
// InfiniPot-V (Kim et al., NeurIPS 2025, "Memory-Constrained KV Cache Compression for Streaming
// Video Understanding"; reference code aiha-lab/InfiniPot-V, qwen_inference_ovu.py
// `_block_wise_prefill` and kvcache_utils.py `process_kv_cache`): the KV cache never holds more than
// `cap_frames` frames of visual tokens. Each frame (visual unit) is prefilled attending causally to
// [sinks | the cache as it stands], keys at their own stream positions; when the cache reaches the
// cap, every layer is compacted in place to `keep_frames` frames' worth of tokens chosen by TaR and
// VaN (tar_van.h), no question needed. The question is answered from the cache as it is
// (retrieval memory_as_is), every token at its encode position.
//
// In the bank: each frame is a Frame block in every layer (ReKV's block: K/V, mean-key
// representative); a compaction chooses each layer's tokens, and the bank rewrites the layer
// (MemoryBank::replace_layer: one Segment block present in that layer only, the layers keeping
// different tokens; the blocks it replaces leave it). Choices where the reference is silent or
// offline are in docs/strategies.md ("InfiniPot-V").

#include <cstdint>
#include <vector>

#include "core/config/schema.h"
#include "core/memory/kv_block.h"
#include "engine/strategy.h"
#include "core/nn/rope.h"
#include "strategies/encoding/infinipot_v/tar_van.h"

namespace svqa {

struct InfinipotVOptions {
  int64_t cap_frames = 16;
  int64_t keep_frames = 12;
  double tar_ratio = 0.5;
  double query_ratio = 0.25;
  bool adaptive_pooling = true;
  static void declare(Schema<InfinipotVOptions>& s);
};

class InfinipotV final : public EncodingStrategy {
 public:
  explicit InfinipotV(InfinipotVOptions options) : options_(options) {}

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override;
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override;
  const SinkKv& sinks() const override { return sinks_; }
  int64_t next_position() const override { return next_position_; }
  // extra.infinipot_v: cache_frames (frames' worth of tokens per layer now), compactions so far.
  void add_record_fields(nlohmann::json& extra) const override;

  int64_t cache_frames() const { return cache_frames_; }
  int64_t compactions() const { return compactions_; }

 private:
  void check_unit(const VisualUnit& unit);
  LayerMemory kept_tokens(Backbone& backbone, const MemoryBank& bank, int64_t layer) const;
  void compact(Backbone& backbone, MemoryBank& bank);

  InfinipotVOptions options_;
  RotaryEmbedding rope_{2, 1.0};  // the backbone's, set by begin_stream
  SinkKv sinks_;
  int64_t next_position_ = 0;
  int64_t tokens_per_frame_ = 0, grid_height_ = 1;  // of the stream's first unit
  int64_t cache_frames_ = 0, compactions_ = 0;
};

}  // namespace svqa
