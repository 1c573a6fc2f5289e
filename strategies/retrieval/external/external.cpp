#include "strategies/retrieval/external/external.h"

#include <algorithm>
#include <stdexcept>

#include "models/image_text/image_text_model.h"
#include "strategies/kit/layer_scores.h"

namespace svqa {

ExternalRetrieval::ExternalRetrieval(const ExternalRetrievalOptions& options)
    : ExternalRetrieval(options, std::make_shared<ImageTextModel>(
                                     options.model, require_device_support(options.device, "retrieval.options.device"))) {}

ExternalRetrieval::ExternalRetrieval(const ExternalRetrievalOptions& options, std::shared_ptr<ImageTextModel> model)
    : options_(options), frames_(std::move(model)) {}

void ExternalRetrieval::begin_stream() {
  frames_.clear();
  selected_frames_.clear();
  selected_blocks_.clear();
  block_scores_.clear();
  question_open_ = false;
}

void ExternalRetrieval::observe(const VisualUnit& unit) { frames_.observe(unit); }

void ExternalRetrieval::begin_question(Backbone& backbone, const QuestionInfo& question, const MemoryBank& bank) {
  (void)backbone;
  selected_frames_.clear();
  selected_blocks_.clear();
  block_scores_.clear();
  question_open_ = true;
  // Candidates: observed frames the bank already holds, in frame order (ReKV groups consecutive frames).
  const FrameScores scored = frames_.score(question.text, last_bank_frame(bank));
  if (scored.frames.empty()) return;

  // ceil(r / b) groups; top_groups takes count / chunk groups, and all rows when there are <= count.
  const int64_t b = options_.chunk_size;
  const int64_t groups = (options_.retrieve_size + b - 1) / b;
  for (const int64_t i : top_groups(scored.cosine, groups * b, b))
    selected_frames_.push_back(scored.frames[static_cast<size_t>(i)]);
  selected_blocks_ = blocks_covering_frames(bank, selected_frames_);
  block_scores_ = block_frame_scores(bank, scored, "mean");
}

std::vector<int64_t> ExternalRetrieval::select(const LayerQuery& query, const MemoryBank& bank) {
  if (!question_open_) throw std::logic_error("external retrieval: select() before begin_question()");
  std::vector<int64_t> stored;  // a block compressed out of this layer (StreamKV) is left out here
  for (const int64_t id : selected_blocks_)
    if (bank.in_layer(id, query.layer)) stored.push_back(id);
  return stored;
}

}  // namespace svqa
