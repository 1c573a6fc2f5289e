#pragma once
// ReKV's external retrieval baseline (paper §3.6): an image-text model (SigLIP) embeds every frame
// as it is encoded and the question when it arrives; frames are ranked by cosine similarity, the
// top retrieve_size frames (or the top ceil(retrieve_size / chunk_size) groups of chunk_size
// consecutive frames, scores averaged per group, as internal retrieval groups blocks) are mapped
// to the bank's blocks by frame index. The same blocks, in time order, for every layer.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config/runtime.h"
#include "core/config/schema.h"
#include "engine/strategy.h"
#include "strategies/kit/frame_embeddings.h"

namespace svqa {

class ImageTextModel;

struct ExternalRetrievalOptions {
  std::string model;  // export directory of python -m models.export.image_text
  int64_t retrieve_size = 64;
  int64_t chunk_size = 1;
  std::string device = "";  // empty: cpu
  static void declare(Schema<ExternalRetrievalOptions>& s) {
    s.field("model", &ExternalRetrievalOptions::model,
            "image-text export directory (python -m models.export.image_text), e.g. SigLIP-so400m")
        .required().must_exist("directory");
    s.field("retrieve_size", &ExternalRetrievalOptions::retrieve_size, "frames retrieved (ReKV r)").min(1)
        .max(kMaxBlocksOption);
    s.field("chunk_size", &ExternalRetrievalOptions::chunk_size,
            "consecutive frames scored as one group by their mean similarity (ReKV b)")
        .min(1)
        .max(kMaxBlocksOption);
    s.field("device", &ExternalRetrievalOptions::device, "device the image-text model runs on; empty: cpu")
        .matches(std::string("|") + kDevicePattern, std::string("empty (cpu), ") + kDevicePatternDoc);
  }
};

class ExternalRetrieval final : public RetrievalStrategy {
 public:
  // Loads options.model onto options.device.
  explicit ExternalRetrieval(const ExternalRetrievalOptions& options);
  // With a model already loaded (tests share one between strategies).
  ExternalRetrieval(const ExternalRetrievalOptions& options, std::shared_ptr<ImageTextModel> model);

  void begin_stream() override;
  void observe(const VisualUnit& unit) override;
  // Embeds the question and chooses once: frames observed so far, up to the bank's last frame.
  void begin_question(Backbone& backbone, const QuestionInfo& question, const MemoryBank& bank) override;
  // The blocks chosen in begin_question that this layer stores (all of them unless the encoder
  // keeps blocks in some layers only), ascending ids.
  std::vector<int64_t> select(const LayerQuery& query, const MemoryBank& bank) override;
  // Per block: the mean cosine similarity of its frames to the question.
  std::map<int64_t, double> block_scores() const override { return block_scores_; }

  // The frame indices chosen for the current question, ascending (for tests and records).
  const std::vector<int64_t>& selected_frames() const { return selected_frames_; }

 private:
  ExternalRetrievalOptions options_;
  FrameEmbeddings frames_;
  std::vector<int64_t> selected_frames_, selected_blocks_;
  std::map<int64_t, double> block_scores_;
  bool question_open_ = false;
};

}  // namespace svqa
