#include "strategies/kit/frame_embeddings.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "models/image_text/image_text_model.h"

namespace svqa {

FrameEmbeddings::FrameEmbeddings(std::shared_ptr<ImageTextModel> model) : model_(std::move(model)) {
  if (!model_) throw std::invalid_argument("external retrieval: no image-text model");
}

void FrameEmbeddings::clear() {
  embeddings_.clear();
  frames_.clear();
}

void FrameEmbeddings::observe(const VisualUnit& unit) {
  if (!unit.rgb.defined() || unit.rgb.size(0) == 0)
    throw std::invalid_argument("external retrieval: unit of frames " + std::to_string(unit.first_frame) + ".." +
                                std::to_string(unit.last_frame) + " has no rgb frames to embed");
  embeddings_.push_back(model_->embed_images(unit.rgb));
  for (int64_t i = 0; i < unit.rgb.size(0); ++i) frames_.push_back(unit.first_frame + i);
}

at::Tensor FrameEmbeddings::embed_text(const std::string& text) const { return model_->embed_text(text); }

FrameScores FrameEmbeddings::score(const std::string& text, int64_t last_frame) const {
  FrameScores out;
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < static_cast<int64_t>(frames_.size()); ++r)
    if (frames_[static_cast<size_t>(r)] <= last_frame) rows.push_back(r);
  std::stable_sort(rows.begin(), rows.end(),
                   [&](int64_t a, int64_t b) { return frames_[static_cast<size_t>(a)] < frames_[static_cast<size_t>(b)]; });
  if (rows.empty()) {
    out.cosine = at::empty({0}, at::kDouble);
    return out;
  }
  for (const int64_t r : rows) out.frames.push_back(frames_[static_cast<size_t>(r)]);
  const auto all = at::cat(embeddings_);  // [n_observed, D]
  out.embeddings = all.index_select(0, at::tensor(rows, at::kLong).to(all.device()));
  out.cosine = at::matmul(out.embeddings, model_->embed_text(text)).to(at::kCPU, at::kDouble).contiguous();
  return out;
}

int64_t last_bank_frame(const MemoryBank& bank) {
  int64_t last = -1;
  for (int64_t id = 0; id < bank.size(); ++id) last = std::max(last, bank.info(id).last_frame);
  return last;
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

std::map<int64_t, double> block_frame_scores(const MemoryBank& bank, const FrameScores& scored,
                                             const std::string& reduce) {
  if (reduce != "max" && reduce != "mean")
    throw std::invalid_argument("block_frame_scores: reduce must be max or mean, got " + reduce);
  std::map<int64_t, double> out;
  const double* cosine = scored.frames.empty() ? nullptr : scored.cosine.data_ptr<double>();
  for (int64_t id = 0; id < bank.size(); ++id) {
    const KvBlock& block = bank.info(id);
    auto it = std::lower_bound(scored.frames.begin(), scored.frames.end(), block.first_frame);
    double sum = 0, best = 0;
    int64_t n = 0;
    for (; it != scored.frames.end() && *it <= block.last_frame; ++it) {
      const double c = cosine[it - scored.frames.begin()];
      best = n ? std::max(best, c) : c;
      sum += c, ++n;
    }
    if (n) out[id] = reduce == "max" ? best : sum / static_cast<double>(n);
  }
  return out;
}

}  // namespace svqa
