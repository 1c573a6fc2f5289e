#pragma once
// ReKV internal retrieval: at every layer, the mean of the question tokens' un-rotated queries is
// scored against each block's representative vector (the reference code's plain dot product, or
// cosine as the paper writes); scores are averaged over groups of `chunk_size` consecutive blocks
// and the top retrieve_size / chunk_size groups are taken, returned in time order.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "core/engine/strategy.h"

namespace svqa {

struct InternalRetrievalOptions {
  int64_t retrieve_size = 64;
  int64_t chunk_size = 1;
  std::string similarity = "dot";
  static void declare(Schema<InternalRetrievalOptions>& s) {
    s.field("retrieve_size", &InternalRetrievalOptions::retrieve_size, "blocks (frames) retrieved per layer (ReKV r)")
        .min(1);
    s.field("chunk_size", &InternalRetrievalOptions::chunk_size,
            "consecutive blocks scored as one group (ReKV b); must divide retrieve_size")
        .min(1);
    s.field("similarity", &InternalRetrievalOptions::similarity,
            "dot: the reference code's unnormalised product; cosine: the paper's formula")
        .one_of({"dot", "cosine"});
    s.check("chunk_size", [](const InternalRetrievalOptions& o) {
      return o.retrieve_size % o.chunk_size ? "must divide retrieve_size (" + std::to_string(o.retrieve_size) + ")"
                                            : std::string();
    });
  }
};

// The score each block got at each layer that scored it, averaged over those layers (what a
// strategy's block_scores() reports for the records).
class LayerScoreMeans {
 public:
  void clear() { sums_.clear(); }
  // `scores` 1-D (any floating dtype, CPU), one per id.
  void add(const std::vector<int64_t>& ids, const at::Tensor& scores);
  std::map<int64_t, double> means() const;

 private:
  std::map<int64_t, std::pair<double, int64_t>> sums_;  // block id -> (sum over layers, layers)
};

class InternalRetrieval final : public RetrievalStrategy {
 public:
  explicit InternalRetrieval(InternalRetrievalOptions options);
  void begin_question(Backbone& backbone, const QuestionInfo& question, const MemoryBank& bank) override;
  std::vector<int64_t> select(const LayerQuery& query, const MemoryBank& bank) override;
  std::map<int64_t, double> block_scores() const override { return score_means_.means(); }

 private:
  InternalRetrievalOptions options_;
  LayerScoreMeans score_means_;
};

// Top `count` / `chunk` groups of `chunk` consecutive rows by mean score (a last partial group
// averaged on its own), expanded to rows, ascending. All rows when there are at most `count`.
std::vector<int64_t> top_groups(const at::Tensor& scores, int64_t count, int64_t chunk);

}  // namespace svqa
