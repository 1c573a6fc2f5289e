#pragma once
// HERMES (Zhang et al. 2026, "KV Cache as Hierarchical Memory for Efficient Streaming Video
// Understanding"; reference code haowei-freesky/HERMES, inference/llavaov_online_official.py):
// the KV cache is the memory, kept under a fixed budget of tokens per layer. Each frame is
// prefilled attending causally to [sinks | the layer's cache]; once the cache (sinks included)
// passes the budget, three pseudo queries (local, global, and both joined) are run over the
// cache, and every layer is cut to its budget by its tier's rule (hierarchy.h): shallow layers
// keep the recent frames, deep layers the tokens the global query attends to plus one summary
// token of the rest, positions re-indexed (layer_shrink.h). The question is answered from the
// memory as it is (retrieval memory_as_is), no retrieval step.
//
// In the bank: each frame is a Frame block in every layer whose next positions agree (ReKV's
// block: K/V, mean-key representative); a compaction chooses what each layer keeps, and the bank
// rewrites the layer (MemoryBank::replace_layer: one Segment block present in that layer only,
// holding what it keeps at its positions; the blocks it replaces leave it).
// Choices where the reference is silent are in docs/strategies.md ("HERMES").

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "engine/strategy.h"
#include "core/nn/rope.h"
#include "strategies/encoding/hermes/hierarchy.h"
#include "strategies/encoding/hermes/layer_shrink.h"

namespace svqa {

inline constexpr const char* kHermesLocalQuery =
    "Describe the current scene in detail, focusing on specific objects, fine-grained actions, and spatial "
    "relationships.";
inline constexpr const char* kHermesGlobalQuery =
    "Summarize the video narrative, identifying main characters, key events, timeline changes, and the overall "
    "theme.";

struct HermesOptions {
  int64_t budget = 4000;
  double short_term_ratio = 0.1;
  double long_term_ratio = 0.3;
  int64_t max_position_embeddings = 32768;
  std::string local_query = kHermesLocalQuery;
  std::string global_query = kHermesGlobalQuery;
  bool record_positions = false;
  static void declare(Schema<HermesOptions>& s);
};

class Hermes final : public EncodingStrategy {
 public:
  explicit Hermes(HermesOptions options) : options_(std::move(options)) {}

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override;
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override;
  const SinkKv& sinks() const override { return sinks_; }
  // The lowest of the layers' next positions: under `original` each layer's question then goes
  // right after the last token it holds, the reference's per-layer position ids.
  int64_t next_position() const override { return next_position_; }
  // extra.hermes: compactions so far, position re-indexings, memory tokens per layer now (and with
  // record_positions, each layer's memory token positions, row 0).
  void add_record_fields(nlohmann::json& extra) const override;

  int64_t compactions() const { return compactions_; }
  int64_t reindexings() const { return reindexings_; }
  const std::vector<LayerRule>& rules() const { return rules_; }

 private:
  void encode_unit(Backbone& backbone, const VisualUnit& unit, MemoryBank& bank);
  std::vector<at::Tensor> query_attention(Backbone& backbone, const MemoryBank& bank, const std::vector<int64_t>& ids);
  std::vector<at::Tensor> tier_attention(Backbone& backbone, const MemoryBank& bank);
  void compact(Backbone& backbone, MemoryBank& bank);
  int64_t layer_tokens(const MemoryBank& bank, int64_t layer) const;
  int64_t layer_next(const MemoryBank& bank, int64_t layer) const;
  std::vector<int64_t> positions_in(const MemoryBank& bank, int64_t layer) const;

  HermesOptions options_;
  SinkKv sinks_;
  std::vector<LayerRule> rules_;
  std::vector<int64_t> local_ids_, global_ids_, mixed_ids_;
  int64_t next_position_ = 0;
  int64_t compactions_ = 0, reindexings_ = 0;
  std::vector<int64_t> layer_tokens_;  // memory tokens per layer after the last unit
  std::vector<std::vector<int64_t>> layer_positions_;  // with record_positions: their positions (row 0)
};

}  // namespace svqa
