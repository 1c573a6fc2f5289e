#pragma once
// StreamKV retrieval (reference code sou1p0wer/StreamKV, `question_answering` and
// `ContextManager._calc_block_topk`). Two retrieval passes of the raw question:
//   1. probe: at every layer the mean un-rotated question query is scored against every block
//      stored in that layer (dot product with its representative key; frames and summaries) and
//      the layer takes retrieve_size blocks: all if it holds no more, else its most recent
//      `local_size` plus the best of the older ones;
//   2. the layer-adaptive budget (layer_budget.h) spreads L·retrieve_size over the layers from the
//      probe's scores, within [max(r·(1 − t), 1), min(r·(1 + t), max_per_layer)], and the question
//      runs again, layer ℓ taking K_ℓ blocks by the same rule (only the last K_ℓ when K_ℓ < local_size).
// Blocks come back in bank (time) order; the context assembler lays them out contiguously.
// Works on any encoding (on ReKV's it is the paper's "retrieval only" row).

#include <cstdint>
#include <map>
#include <vector>

#include "core/config/schema.h"
#include "engine/strategy.h"
#include "strategies/kit/layer_scores.h"

namespace svqa {

struct StreamkvRetrievalOptions {
  int64_t retrieve_size = 64;
  double retrieve_temp = 0.5;
  bool retrieve_local = true;
  int64_t local_size = 8;
  int64_t max_per_layer = 128;
  bool layer_adaptive = true;
  static void declare(Schema<StreamkvRetrievalOptions>& s);
};

class StreamkvLayerAdaptive final : public RetrievalStrategy {
 public:
  explicit StreamkvLayerAdaptive(StreamkvRetrievalOptions options) : options_(options) {}

  void begin_question(Backbone& backbone, const QuestionInfo& question, const MemoryBank& bank) override;
  int retrieval_passes() const override { return options_.layer_adaptive ? 2 : 1; }
  std::vector<int64_t> select(const LayerQuery& query, const MemoryBank& bank) override;
  // Per block: its probe score, averaged over the layers that store it.
  std::map<int64_t, double> block_scores() const override { return score_means_.means(); }

  // Under "streamkv_layer_adaptive": the second pass's blocks per layer.
  void add_record_fields(nlohmann::json& extra) const override;
  // Blocks per layer the last question's second pass was given (empty before it ran).
  const std::vector<int64_t>& allocation() const { return allocation_; }

 private:
  StreamkvRetrievalOptions options_;
  std::map<int64_t, at::Tensor> probe_scores_;  // layer → scores of its blocks (float32, CPU), bank order
  LayerScoreMeans score_means_;
  std::vector<int64_t> allocation_;
};

// The reference code's choice of `count` of a layer's `n` blocks (bank order) by `scores`: all when
// n ≤ count; else (with `local` > 0) the last `local` plus the top count − local of the others, or
// only the last `count` when count < local; without `local`, the top `count`. Rows, ascending.
std::vector<int64_t> recent_plus_top(const at::Tensor& scores, int64_t count, int64_t local);

}  // namespace svqa
