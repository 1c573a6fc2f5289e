#pragma once
// ReKV internal retrieval: at every layer, the mean of the question tokens' un-rotated queries is
// scored against each block's representative vector (the reference code's plain dot product, or
// cosine as the paper writes); scores are averaged over groups of `chunk_size` consecutive blocks
// and the top retrieve_size / chunk_size groups are taken, returned in time order. The scoring and
// grouping are in layer_scores.h, for other strategies to call.

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "engine/strategy.h"
#include "strategies/kit/layer_scores.h"

namespace svqa {

struct InternalRetrievalOptions {
  int64_t retrieve_size = 64;
  int64_t chunk_size = 1;
  std::string similarity = "dot";
  static void declare(Schema<InternalRetrievalOptions>& s) {
    s.field("retrieve_size", &InternalRetrievalOptions::retrieve_size, "blocks (frames) retrieved per layer (ReKV r)")
        .min(1)
        .max(kMaxBlocksOption);
    s.field("chunk_size", &InternalRetrievalOptions::chunk_size,
            "consecutive blocks scored as one group (ReKV b); must divide retrieve_size")
        .min(1)
        .max(kMaxBlocksOption);
    s.field("similarity", &InternalRetrievalOptions::similarity,
            "dot: the reference code's unnormalised product; cosine: the paper's formula")
        .one_of({"dot", "cosine"});
    s.check("chunk_size", [](const InternalRetrievalOptions& o) {
      return o.retrieve_size % o.chunk_size ? "must divide retrieve_size (" + std::to_string(o.retrieve_size) + ")"
                                            : std::string();
    });
  }
};

class InternalRetrieval final : public RetrievalStrategy {
 public:
  explicit InternalRetrieval(InternalRetrievalOptions options);
  void begin_question(Backbone& backbone, const QuestionInfo& question, const MemoryBank& bank) override;
  std::vector<int64_t> select(const LayerQuery& query, const MemoryBank& bank) override;
  std::map<int64_t, double> block_scores() const override;

 private:
  InternalRetrievalOptions options_;
  LayerScoreMeans score_means_;
};

}  // namespace svqa
