#pragma once
// Mem-Stream's retrieval mixture of experts (Agarwal et al. 2026, §4.2): at every layer the
// internal expert (ReKV: the layer's mean question query against each block's representative key)
// and the external expert (an image-text model's question/frame cosine, PE-Core or CLIP, shared by
// all layers) each rank the blocks; the rankings are fused by reciprocal-rank fusion and the top
// `retrieve_size` blocks (frame-features) are taken per layer. `fusion: l2_concat` is the early
// fusion the paper rejects (Table 6): the cosine of the concatenated L2-normalised question and
// block embeddings of both modalities.
//
// A block's external score is the max (or mean) of its frames' cosines: a Qwen2.5-VL block is a
// temporal patch of 2 frames, each embedded on its own.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/config/runtime.h"
#include "core/config/schema.h"
#include "engine/strategy.h"
#include "strategies/kit/frame_embeddings.h"
#include "strategies/kit/layer_scores.h"

namespace svqa {

struct RrfMixtureOptions {
  std::string model;  // export directory of python -m models.export.image_text
  std::string device = "";
  int64_t retrieve_size = 64;
  std::string fusion = "rrf";
  double k = 60;
  double internal_weight = 1, external_weight = 1;
  std::string similarity = "dot";
  std::string frame_reduce = "max";
  static void declare(Schema<RrfMixtureOptions>& s) {
    s.field("model", &RrfMixtureOptions::model,
            "image-text export of the external expert (python -m models.export.image_text): PE-Core ViT-L in the "
            "paper, CLIP ViT-L or SigLIP as alternatives")
        .required().must_exist("directory");
    s.field("device", &RrfMixtureOptions::device, "device the external expert runs on; empty: cpu")
        .matches(std::string("|") + kDevicePattern, std::string("empty (cpu), ") + kDevicePatternDoc);
    s.field("retrieve_size", &RrfMixtureOptions::retrieve_size,
            "blocks (frame-features) retrieved per layer; the paper's 64 (about 128 frames, 17K tokens)")
        .min(1)
        .max(kMaxBlocksOption);
    s.field("fusion", &RrfMixtureOptions::fusion,
            "rrf: reciprocal-rank fusion per layer (the paper's); l2_concat: cosine of the concatenated "
            "L2-normalised embeddings of both experts (the early fusion it rejects)")
        .one_of({"rrf", "l2_concat"});
    s.field("k", &RrfMixtureOptions::k,
            "RRF constant in w / (k + rank); the paper leaves it unstated, 60 is Cormack et al.'s")
        .min(0)
        .max(kMaxWeightOption);
    s.field("internal_weight", &RrfMixtureOptions::internal_weight,
            "weight of the internal (ReKV) ranking; the paper's equal weights: 1")
        .min(0)
        .max(kMaxWeightOption);
    s.field("external_weight", &RrfMixtureOptions::external_weight,
            "weight of the external (image-text) ranking; the paper's equal weights: 1")
        .min(0)
        .max(kMaxWeightOption);
    s.field("similarity", &RrfMixtureOptions::similarity,
            "internal expert's score: dot (ReKV's code) or cosine (its paper); l2_concat always uses cosine")
        .one_of({"dot", "cosine"});
    s.field("frame_reduce", &RrfMixtureOptions::frame_reduce,
            "a block's external score from its frames' cosines (2 frames per Qwen2.5-VL frame-feature): max "
            "(relevant if either frame is) or mean")
        .one_of({"max", "mean"});
    s.check("external_weight", [](const RrfMixtureOptions& o) {
      return o.internal_weight + o.external_weight > 0 ? std::string() : std::string("one of the two weights must be > 0");
    });
  }
};

class RrfMixture final : public RetrievalStrategy {
 public:
  explicit RrfMixture(const RrfMixtureOptions& options);
  RrfMixture(const RrfMixtureOptions& options, std::shared_ptr<ImageTextModel> model);

  void begin_stream() override;
  void observe(const VisualUnit& unit) override;
  // Scores the observed frames the bank holds against the question (the external ranking).
  void begin_question(Backbone& backbone, const QuestionInfo& question, const MemoryBank& bank) override;
  std::vector<int64_t> select(const LayerQuery& query, const MemoryBank& bank) override;
  // The fused score of each block, averaged over layers.
  std::map<int64_t, double> block_scores() const override { return fused_.means(); }
  // "internal": its score averaged over layers; "external": the block's frame cosine (max or mean).
  std::map<std::string, std::map<int64_t, double>> expert_block_scores() const override;

 private:
  RrfMixtureOptions options_;
  FrameEmbeddings frames_;
  bool question_open_ = false;
  std::map<int64_t, double> external_;         // block id -> external score
  std::map<int64_t, at::Tensor> block_embeds_;  // l2_concat: block id -> its frames' mean embedding, unit norm
  at::Tensor text_;                             // l2_concat: the question's embedding
  LayerScoreMeans internal_, fused_;
};

}  // namespace svqa
