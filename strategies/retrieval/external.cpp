#include "strategies/retrieval/external.h"

#include <algorithm>
#include <stdexcept>

#include "models/image_text_model.h"
#include "strategies/retrieval/internal.h"

namespace svqa {

ExternalRetrieval::ExternalRetrieval(const ExternalRetrievalOptions& options)
    : ExternalRetrieval(options, std::make_shared<ImageTextModel>(
                                     options.model, at::Device(options.device.empty() ? "cpu" : options.device))) {}

ExternalRetrieval::ExternalRetrieval(const ExternalRetrievalOptions& options, std::shared_ptr<ImageTextModel> model)
    : options_(options), model_(std::move(model)) {
  if (!model_) throw std::invalid_argument("external retrieval: no image-text model");
}

void ExternalRetrieval::begin_stream() {
  embeddings_.clear();
  frames_.clear();
  selected_frames_.clear();
  selected_blocks_.clear();
  block_scores_.clear();
  question_open_ = false;
}

void ExternalRetrieval::observe(const VisualUnit& unit) {
  if (!unit.rgb.defined() || unit.rgb.size(0) == 0)
    throw std::invalid_argument("external retrieval: unit of frames " + std::to_string(unit.first_frame) + ".." +
                                std::to_string(unit.last_frame) + " has no rgb frames to embed");
  embeddings_.push_back(model_->embed_images(unit.rgb));
  for (int64_t i = 0; i < unit.rgb.size(0); ++i) frames_.push_back(unit.first_frame + i);
}

void ExternalRetrieval::begin_question(Backbone& backbone, const QuestionInfo& question, const MemoryBank& bank) {
  (void)backbone;
  selected_frames_.clear();
  selected_blocks_.clear();
  block_scores_.clear();
  question_open_ = true;
  if (bank.size() == 0 || frames_.empty()) return;
  int64_t last_bank_frame = bank.info(0).last_frame;
  for (int64_t id = 1; id < bank.size(); ++id) last_bank_frame = std::max(last_bank_frame, bank.info(id).last_frame);

  // Candidates: observed frames the bank already holds, in frame order (ReKV groups consecutive frames).
  const auto frame_of = [&](int64_t row) { return frames_[static_cast<size_t>(row)]; };
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < static_cast<int64_t>(frames_.size()); ++r)
    if (frame_of(r) <= last_bank_frame) rows.push_back(r);
  std::stable_sort(rows.begin(), rows.end(), [&](int64_t a, int64_t b) { return frame_of(a) < frame_of(b); });
  if (rows.empty()) return;

  const auto all = at::cat(embeddings_);  // [n_observed, D], unit rows
  const auto candidates = all.index_select(0, at::tensor(rows, at::kLong).to(all.device()));
  const auto text = model_->embed_text(question.text);
  const auto cosine = at::matmul(candidates, text).to(at::kCPU, at::kDouble);  // both unit norm

  // ceil(r / b) groups; top_groups takes count / chunk groups, and all rows when there are <= count.
  const int64_t b = options_.chunk_size;
  const int64_t groups = (options_.retrieve_size + b - 1) / b;
  for (const int64_t i : top_groups(cosine, groups * b, b))
    selected_frames_.push_back(frame_of(rows[static_cast<size_t>(i)]));
  std::sort(selected_frames_.begin(), selected_frames_.end());
  selected_blocks_ = blocks_covering_frames(bank, selected_frames_);

  std::map<int64_t, double> frame_score;
  const auto cosine_cpu = cosine.contiguous();
  for (size_t i = 0; i < rows.size(); ++i) frame_score[frame_of(rows[i])] = cosine_cpu.data_ptr<double>()[i];
  for (int64_t id = 0; id < bank.size(); ++id) {
    const KvBlock& block = bank.info(id);
    double sum = 0;
    int64_t n = 0;
    for (auto it = frame_score.lower_bound(block.first_frame); it != frame_score.end() && it->first <= block.last_frame; ++it)
      sum += it->second, ++n;
    if (n) block_scores_[id] = sum / static_cast<double>(n);
  }
}

std::vector<int64_t> ExternalRetrieval::select(const LayerQuery& query, const MemoryBank& bank) {
  if (!question_open_) throw std::logic_error("external retrieval: select() before begin_question()");
  std::vector<int64_t> stored;  // a block compressed out of this layer (StreamKV) is left out here
  for (const int64_t id : selected_blocks_)
    if (bank.in_layer(id, query.layer)) stored.push_back(id);
  return stored;
}

std::vector<int64_t> blocks_covering_frames(const MemoryBank& bank, const std::vector<int64_t>& frames) {
  std::vector<int64_t> ids;
  for (int64_t id = 0; id < bank.size(); ++id) {
    const KvBlock& b = bank.info(id);
    const auto it = std::lower_bound(frames.begin(), frames.end(), b.first_frame);
    if (it != frames.end() && *it <= b.last_frame) ids.push_back(id);
  }
  return ids;
}

}  // namespace svqa
