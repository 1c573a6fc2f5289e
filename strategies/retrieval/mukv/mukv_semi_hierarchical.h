#pragma once
// MuKV retrieval (Xiao et al., CVPR 2026; reference code IMBALDY/MuKV, model/mukv_rerank.py): one
// query vector per question, from the question run over the sinks alone (the reference: the
// last-layer key of its last token, rotated; the paper: its mean last-layer query), scored by
// cosine against each block's representative (mukv_multigrain's mean kept key). Per granularity
// the top over_retrieve·k_g are candidates; semi-hierarchical rerank (paper Eq. 8): with c the mean
// representative of the best `context_segments` of the over_retrieve·k_segment shortlisted segments
// (the reference's coarse candidates), a frame/patch candidate's score becomes
// (1 − λ_g)·s + λ_g·cos(r, c); the top k_g of each granularity are kept. `parallel` keeps the top
// k_g by s; `hierarchical` takes frames/patches only from inside the best segments (paper Table 7).
// The same blocks at every layer, ordered patch, frame, segment, each by descending score.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/config/schema.h"
#include "engine/strategy.h"

namespace svqa {

struct MukvBlockCounts {
  int64_t patch = 20, frame = 32, segment = 12;
  static void declare(Schema<MukvBlockCounts>& s) {
    s.field("patch", &MukvBlockCounts::patch, "k: patch blocks brought back (paper 20)").min(0)
        .max(kMaxBlocksOption);
    s.field("frame", &MukvBlockCounts::frame, "k: frame blocks brought back (paper 32)").min(0)
        .max(kMaxBlocksOption);
    s.field("segment", &MukvBlockCounts::segment, "k: segment blocks brought back (paper 12)").min(0)
        .max(kMaxBlocksOption);
  }
};

struct MukvLambdas {
  double patch = 0.3, frame = 0.3;
  static void declare(Schema<MukvLambdas>& s) {
    s.field("patch", &MukvLambdas::patch, "λ: weight of segment context in a patch candidate's score (paper 0.3)")
        .min(0)
        .max(1);
    s.field("frame", &MukvLambdas::frame, "λ: weight of segment context in a frame candidate's score (paper 0.3)")
        .min(0)
        .max(1);
  }
};

struct MukvRetrievalOptions {
  std::string mode = "semi_hierarchical";
  MukvBlockCounts blocks;
  MukvLambdas lambda;
  int64_t over_retrieve = 2;
  int64_t context_segments = 5;
  std::string query = "last_key";
  static void declare(Schema<MukvRetrievalOptions>& s) {
    s.field("mode", &MukvRetrievalOptions::mode,
            "semi_hierarchical: rerank frame/patch candidates by the best segments (paper); parallel: top k per "
            "granularity by the question alone; hierarchical: frames/patches only from inside the best segments")
        .one_of({"semi_hierarchical", "parallel", "hierarchical"});
    s.field("blocks", &MukvRetrievalOptions::blocks, "k per granularity: blocks brought back");
    s.field("lambda", &MukvRetrievalOptions::lambda, "λ per granularity (segments keep their own score)");
    s.field("over_retrieve", &MukvRetrievalOptions::over_retrieve,
            "candidates per granularity before the rerank, as a multiple of k (reference 2)")
        .min(1)
        .max(1000);
    s.field("context_segments", &MukvRetrievalOptions::context_segments,
            "N: best of the over_retrieve·k_segment shortlisted segments whose mean representative is the rerank "
            "context (reference rerank_top_n 5)")
        .min(1)
        .max(kMaxBlocksOption);
    s.field("query", &MukvRetrievalOptions::query,
            "last_key: the last question token's last-layer key (reference); mean_query: the mean last-layer "
            "query over the question, query heads averaged per kv head (paper Eq. 6)")
        .one_of({"last_key", "mean_query"});
  }
};

// What one question retrieves: block ids in context order, and every block's question score.
struct MukvSelection {
  std::vector<int64_t> ids;
  std::map<int64_t, double> scores;  // cosine(query, representative), every scored block
  std::map<std::string, std::pair<int64_t, int64_t>> by_granularity;  // name → (blocks, tokens) brought back
};

// The selection for `query` [dim] among the blocks whose representatives `bank` keeps in `layer`.
MukvSelection mukv_select(const at::Tensor& query, const MemoryBank& bank, int64_t layer,
                          const MukvRetrievalOptions& options);

class MukvRetrieval final : public RetrievalStrategy {
 public:
  explicit MukvRetrieval(MukvRetrievalOptions options) : options_(std::move(options)) {}
  void begin_question(Backbone& backbone, const QuestionInfo& question, const MemoryBank& bank) override;
  std::vector<int64_t> select(const LayerQuery& query, const MemoryBank& bank) override;
  bool selects_per_layer() const override { return false; }  // chosen once, in begin_question
  std::map<int64_t, double> block_scores() const override { return selection_.scores; }
  // Under "mukv_semi_hierarchical": the mode, and blocks and tokens brought back per granularity.
  void add_record_fields(nlohmann::json& extra) const override;

 private:
  MukvRetrievalOptions options_;
  MukvSelection selection_;
};

// MuKV's query vector: `text` run over the sinks; the last layer's rotated key of the last token
// (kv heads concatenated), or its rotated queries averaged over tokens and over the query heads of
// each kv head. [kv_heads · head_dim] float32.
at::Tensor mukv_query(Backbone& backbone, const SinkKv& sinks, const std::string& text, bool mean_query);

}  // namespace svqa
