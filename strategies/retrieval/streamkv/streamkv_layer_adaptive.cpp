#include "strategies/retrieval/streamkv/streamkv_layer_adaptive.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "strategies/kit/layer_budget.h"

namespace svqa {

void StreamkvRetrievalOptions::declare(Schema<StreamkvRetrievalOptions>& s) {
  s.field("retrieve_size", &StreamkvRetrievalOptions::retrieve_size,
          "blocks per layer on average (the total is layers × retrieve_size); the probe pass takes this many")
      .min(1)
        .max(kMaxBlocksOption);
  s.field("retrieve_temp", &StreamkvRetrievalOptions::retrieve_temp,
          "spread of per-layer counts: bounds [max(r·(1 − t), 1), min(r·(1 + t), max_per_layer)]")
      .min(0)
        .max(100);
  s.field("retrieve_local", &StreamkvRetrievalOptions::retrieve_local,
          "always take each layer's most recent local_size blocks");
  s.field("local_size", &StreamkvRetrievalOptions::local_size, "recent blocks always taken (reference: 8)").min(1)
        .max(kMaxBlocksOption);
  s.field("max_per_layer", &StreamkvRetrievalOptions::max_per_layer,
          "upper bound of a layer's count (reference: 128, its GPU block cache)")
      .min(1)
        .max(kMaxBlocksOption);
  s.field("layer_adaptive", &StreamkvRetrievalOptions::layer_adaptive,
          "true: probe pass, then layer-adaptive counts; false: one pass, every layer takes retrieve_size");
}

std::vector<int64_t> recent_plus_top(const at::Tensor& scores, int64_t count, int64_t local) {
  const int64_t n = scores.size(0);
  if (n <= count || local <= 0) return top_groups(scores, count, 1);  // all, or the top `count`
  std::vector<int64_t> rows;
  if (count > local) rows = top_groups(scores.narrow(0, 0, n - local), count - local, 1);  // the best older ones
  for (int64_t r = n - std::min(count, local); r < n; ++r) rows.push_back(r);               // the most recent
  return rows;
}

void StreamkvLayerAdaptive::begin_question(Backbone& backbone, const QuestionInfo& question, const MemoryBank& bank) {
  (void)backbone, (void)question, (void)bank;
  probe_scores_.clear();
  score_means_.clear();
  allocation_.clear();
}

std::vector<int64_t> StreamkvLayerAdaptive::select(const LayerQuery& query, const MemoryBank& bank) {
  const int64_t local = options_.retrieve_local ? options_.local_size : 0;
  if (query.pass > 0 && allocation_.empty()) {
    // Every layer has been probed (layers 0..L-1): spread L·retrieve_size over them.
    std::vector<at::Tensor> probed;
    for (const auto& [layer, s] : probe_scores_) probed.push_back(s);
    const auto r = static_cast<double>(options_.retrieve_size), t = options_.retrieve_temp;
    allocation_ = rescale_sum_match(
        cdf_layer_counts(probed, static_cast<int64_t>(probed.size()) * options_.retrieve_size),
        std::max(r * (1 - t), 1.0), std::min(r * (1 + t), static_cast<double>(options_.max_per_layer)));
  }
  // This pass's question queries (in the second pass they have seen other blocks at earlier layers).
  const LayerScores layer = score_layer(query, bank, "dot");
  if (query.pass == 0) {
    probe_scores_[query.layer] = layer.scores;
    score_means_.add(layer.ids, layer.scores);
  }
  if (layer.ids.empty()) return {};
  const int64_t count = query.pass == 0 ? options_.retrieve_size : allocation_.at(static_cast<size_t>(query.layer));
  std::vector<int64_t> out;
  for (const int64_t row : recent_plus_top(layer.scores, count, local)) out.push_back(layer.ids[static_cast<size_t>(row)]);
  return out;
}

void StreamkvLayerAdaptive::add_record_fields(nlohmann::json& extra) const {
  extra["streamkv_layer_adaptive"] = {{"allocation", allocation_}};
}

}  // namespace svqa
