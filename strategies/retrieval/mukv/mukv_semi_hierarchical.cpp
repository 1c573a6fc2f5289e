#include "strategies/retrieval/mukv/mukv_semi_hierarchical.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/nn/attention.h"
#include "engine/layer_over_context.h"
#include "models/backbones/backbone.h"
#include "models/backbones/full_context.h"

namespace svqa {
namespace {

// Rows of `scores` (CPU double) in descending order, ties by row (stable); the first `k`.
std::vector<int64_t> top_rows(const std::vector<double>& scores, const std::vector<int64_t>& rows, int64_t k) {
  std::vector<int64_t> out = rows;
  std::stable_sort(out.begin(), out.end(), [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  if (static_cast<int64_t>(out.size()) > k) out.resize(static_cast<size_t>(k));
  return out;
}

std::vector<double> to_vector(const at::Tensor& t) {
  const auto c = t.to(at::kCPU, at::kDouble).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

// The rows whose blocks lie inside one of the `segments` rows' blocks (hierarchical retrieval).
std::vector<int64_t> rows_inside(const MemoryBank& bank, const std::vector<int64_t>& ids,
                                 const std::vector<int64_t>& rows, const std::vector<int64_t>& segments) {
  std::vector<int64_t> inside;
  for (const int64_t r : rows) {
    const auto& b = bank.info(ids[r]);
    if (std::any_of(segments.begin(), segments.end(), [&](int64_t sr) {
          const auto& sb = bank.info(ids[sr]);
          return b.first_frame >= sb.first_frame && b.last_frame <= sb.last_frame;
        }))
      inside.push_back(r);
  }
  return inside;
}

}  // namespace

MukvSelection mukv_select(const at::Tensor& query, const MemoryBank& bank, int64_t layer,
                          const MukvRetrievalOptions& o) {
  MukvSelection out;
  const auto& ids = bank.representative_ids(layer);
  if (ids.empty()) return out;
  const at::Tensor reps = bank.representatives(layer);
  const at::Tensor q = query.to(reps.device(), at::kFloat).flatten();
  if (q.size(0) != reps.size(1))
    throw std::invalid_argument("mukv retrieval: query of " + std::to_string(q.size(0)) + " values vs representatives of " +
                                std::to_string(reps.size(1)));
  const std::vector<double> s = to_vector(at::cosine_similarity(reps, q.unsqueeze(0), 1));
  for (size_t i = 0; i < ids.size(); ++i) out.scores[ids[i]] = s[i];

  std::vector<std::vector<int64_t>> rows(kGranularities);  // rows of each granularity
  for (size_t i = 0; i < ids.size(); ++i) rows[static_cast<size_t>(bank.info(ids[i]).granularity)].push_back(static_cast<int64_t>(i));
  const auto k = [&](Granularity g) {
    return g == Granularity::Patch ? o.blocks.patch : g == Granularity::Frame ? o.blocks.frame : o.blocks.segment;
  };
  const auto seg = static_cast<size_t>(Granularity::Segment);
  // The best `context_segments` of the segments shortlisted (over_retrieve · k_segment), as the reference
  // (model/mukv_rerank.py, _rerank_with_context: top-N of the coarse candidates): fewer than N when
  // the shortlist is shorter, never a segment outside it.
  const auto best_segments = top_rows(s, top_rows(s, rows[seg], o.over_retrieve * o.blocks.segment), o.context_segments);

  std::vector<double> score = s;  // reranked where the mode says
  if (o.mode == "semi_hierarchical") {
    // Context: the mean representative of the best segments; the question itself if there are none
    // (then cos(r, c) = s and the rerank changes nothing, as the reference without segments).
    at::Tensor c = q;
    if (!best_segments.empty())
      c = reps.index_select(0, at::tensor(best_segments, at::kLong).to(reps.device())).mean(0);
    const std::vector<double> gamma = to_vector(at::cosine_similarity(reps, c.unsqueeze(0), 1));
    for (const auto g : {Granularity::Patch, Granularity::Frame}) {
      const double lambda = g == Granularity::Patch ? o.lambda.patch : o.lambda.frame;
      for (const int64_t r : top_rows(s, rows[static_cast<size_t>(g)], o.over_retrieve * k(g)))
        score[r] = (1 - lambda) * s[r] + lambda * gamma[r];
    }
  }
  for (const auto g : {Granularity::Patch, Granularity::Frame, Granularity::Segment}) {
    auto candidates = top_rows(s, rows[static_cast<size_t>(g)], o.over_retrieve * k(g));
    if (o.mode == "hierarchical" && g != Granularity::Segment)
      candidates = rows_inside(bank, ids, rows[static_cast<size_t>(g)], best_segments);
    for (const int64_t r : top_rows(score, candidates, k(g))) {
      out.ids.push_back(ids[r]);
      auto& [blocks, tokens] = out.by_granularity[granularity_name(g)];
      blocks += 1;
      tokens += bank.info(ids[r]).num_tokens();
    }
  }
  return out;
}

at::Tensor mukv_query(Backbone& backbone, const SinkKv& sinks, const std::string& text, bool mean_query) {
  const auto ids = backbone.tokenizer().encode(text);
  if (ids.empty()) throw std::invalid_argument("mukv retrieval: empty question");
  const auto rope = text_rotary(backbone.manifest());
  const auto device = backbone.device();
  const auto dtype = backbone.dtype();
  const int64_t T = static_cast<int64_t>(ids.size()), layers = backbone.num_layers();
  const auto tables = rope.tables(text_positions(sinks.size() ? next_position(sinks.positions) : 0, T).to(device));
  RotaryTables sink_tables;
  if (sinks.size()) sink_tables = rope.tables(sinks.positions.to(device));
  at::Tensor query;
  const auto attend_layer = [&](int64_t l, size_t, const at::Tensor&, const LayerQkv& qkv) -> at::Tensor {
    const auto k = apply_rotary(qkv.k, tables);
    if (l == layers - 1) {  // the query is read from this layer's Q/K: the pass stops here
      if (mean_query) {
        const auto q = apply_rotary(qkv.q, tables).to(at::kFloat).mean(0);  // [heads, d]
        query = q.view({k.size(1), -1, q.size(1)}).mean(1).flatten();      // query heads averaged per kv head
      } else {
        query = k[T - 1].to(at::kFloat).flatten();
      }
      return {};
    }
    std::vector<at::Tensor> ks, vs;
    if (sinks.size())
      ks.push_back(apply_rotary(sinks.keys[l].to(device, dtype), sink_tables)), vs.push_back(sinks.values[l].to(device, dtype));
    ks.push_back(k);
    vs.push_back(qkv.v);
    return attend(apply_rotary(qkv.q, tables), ks, vs, AttentionMask{}).out;
  };
  forward_layers(backbone, {{backbone.embed(at::tensor(ids, at::kLong))}, {}, attend_layer});
  return query;
}

void MukvRetrieval::begin_question(Backbone& backbone, const QuestionInfo& question, const MemoryBank& bank) {
  if (!question.sinks) throw std::invalid_argument("mukv retrieval: the question carries no sinks");
  const at::Tensor q = mukv_query(backbone, *question.sinks, question.text, options_.query == "mean_query");
  selection_ = mukv_select(q, bank, backbone.num_layers() - 1, options_);
}

void MukvRetrieval::add_record_fields(nlohmann::json& extra) const {
  nlohmann::json blocks = nlohmann::json::object(), tokens = nlohmann::json::object();
  for (const auto& [name, counts] : selection_.by_granularity) blocks[name] = counts.first, tokens[name] = counts.second;
  extra["mukv_semi_hierarchical"] = {{"mode", options_.mode}, {"blocks", blocks}, {"tokens", tokens}};
}

std::vector<int64_t> MukvRetrieval::select(const LayerQuery& query, const MemoryBank& bank) {
  std::vector<int64_t> out;
  for (const int64_t id : selection_.ids)
    if (bank.in_layer(id, query.layer)) out.push_back(id);
  return out;
}

}  // namespace svqa
