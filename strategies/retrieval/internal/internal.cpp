#include "strategies/retrieval/internal/internal.h"

#include <stdexcept>

namespace svqa {

InternalRetrieval::InternalRetrieval(InternalRetrievalOptions options) : options_(std::move(options)) {
  if (options_.retrieve_size % options_.chunk_size)
    throw std::invalid_argument("internal retrieval: chunk_size " + std::to_string(options_.chunk_size) +
                                " must divide retrieve_size " + std::to_string(options_.retrieve_size));
}

void InternalRetrieval::begin_question(Backbone& backbone, const QuestionInfo& question, const MemoryBank& bank) {
  (void)backbone, (void)question, (void)bank;
  score_means_.clear();
}

std::map<int64_t, double> InternalRetrieval::block_scores() const { return score_means_.means(); }

std::vector<int64_t> InternalRetrieval::select(const LayerQuery& query, const MemoryBank& bank) {
  const LayerScores layer = score_layer(query, bank, options_.similarity);
  score_means_.add(layer.ids, layer.scores);
  std::vector<int64_t> out;
  for (const int64_t row : top_groups(layer.scores, options_.retrieve_size, options_.chunk_size))
    out.push_back(layer.ids[static_cast<size_t>(row)]);
  return out;
}

}  // namespace svqa
