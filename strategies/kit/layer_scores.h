#pragma once
// ReKV's internal scoring of memory blocks at one layer, shared by every retrieval strategy that
// ranks blocks by the question's own queries (internal, rrf_mixture, ...): the mean of the question
// tokens' un-rotated queries against each block's representative vector, a plain dot product (the
// reference code) or cosine (the paper's formula); and the grouping of consecutive blocks.

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/stream_types.h"
#include "core/memory/memory_bank.h"

namespace svqa {

struct LayerScores {
  std::vector<int64_t> ids;  // blocks present in the layer, in bank order
  at::Tensor scores;         // [ids.size()] float64 on the CPU, contiguous, aligned with ids
};

// `similarity` is "dot" or "cosine". Empty when no block is present in the layer.
LayerScores score_layer(const LayerQuery& query, const MemoryBank& bank, const std::string& similarity);

// Top `count` / `chunk` groups of `chunk` consecutive rows by mean score (a last partial group
// averaged on its own), expanded to rows, ascending. All rows when there are at most `count`.
std::vector<int64_t> top_groups(const at::Tensor& scores, int64_t count, int64_t chunk);

// Each block's score averaged over the layers that scored it: what block_scores() reports.
class LayerScoreMeans {
 public:
  void clear() { sums_.clear(); }
  void add(const std::vector<int64_t>& ids, const at::Tensor& scores);  // scores: 1-D, one per id, any float dtype
  std::map<int64_t, double> means() const;

 private:
  std::map<int64_t, std::pair<double, int64_t>> sums_;  // block id -> (sum over layers, layers)
};

}  // namespace svqa
