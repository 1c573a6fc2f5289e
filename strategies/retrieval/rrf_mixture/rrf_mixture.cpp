#include "strategies/retrieval/rrf_mixture/rrf_mixture.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "models/image_text/image_text_model.h"
#include "strategies/kit/rank_fusion.h"

namespace svqa {

RrfMixture::RrfMixture(const RrfMixtureOptions& options)
    : RrfMixture(options, std::make_shared<ImageTextModel>(
                              options.model, require_device_support(options.device, "retrieval.options.device"))) {}

RrfMixture::RrfMixture(const RrfMixtureOptions& options, std::shared_ptr<ImageTextModel> model)
    : options_(options), frames_(std::move(model)) {}

void RrfMixture::begin_stream() {
  frames_.clear();
  question_open_ = false;
}

void RrfMixture::observe(const VisualUnit& unit) { frames_.observe(unit); }

void RrfMixture::begin_question(Backbone& backbone, const QuestionInfo& question, const MemoryBank& bank) {
  (void)backbone;
  internal_.clear();
  fused_.clear();
  block_embeds_.clear();
  question_open_ = true;
  const FrameScores scored = frames_.score(question.text, last_bank_frame(bank));
  external_ = block_frame_scores(bank, scored, options_.frame_reduce);
  if (options_.fusion != "l2_concat" || scored.frames.empty()) return;
  text_ = frames_.embed_text(question.text);
  for (const auto& [id, score] : external_) {
    (void)score;
    const KvBlock& b = bank.info(id);
    std::vector<int64_t> rows;
    for (size_t i = 0; i < scored.frames.size(); ++i)
      if (scored.frames[i] >= b.first_frame && scored.frames[i] <= b.last_frame) rows.push_back(static_cast<int64_t>(i));
    const auto mean = scored.embeddings.index_select(0, at::tensor(rows, at::kLong).to(scored.embeddings.device())).mean(0);
    block_embeds_[id] = mean / mean.norm();
  }
}

std::vector<int64_t> RrfMixture::select(const LayerQuery& query, const MemoryBank& bank) {
  if (!question_open_) throw std::logic_error("rrf_mixture: select() before begin_question()");
  const bool concat = options_.fusion == "l2_concat";
  const LayerScores layer = score_layer(query, bank, concat ? "cosine" : options_.similarity);
  if (layer.ids.empty()) return {};
  internal_.add(layer.ids, layer.scores);

  const int64_t n = static_cast<int64_t>(layer.ids.size());
  auto external = at::full({n}, std::numeric_limits<double>::quiet_NaN(), at::kDouble);
  double* ext = external.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = layer.ids[static_cast<size_t>(i)];
    if (concat) {
      const auto it = block_embeds_.find(id);
      if (it != block_embeds_.end()) ext[i] = at::dot(it->second, text_).item<double>();
    } else if (const auto it = external_.find(id); it != external_.end()) {
      ext[i] = it->second;
    }
  }

  at::Tensor fused;
  if (concat) {
    // cos([√a·q̂; √b·t̂], [√a·k̂; √b·x̂]) = (a·cos(q, k) + b·cos(t, x)) / (a + b); a block the
    // external expert has not seen contributes 0 from that half.
    const double a = options_.internal_weight, b = options_.external_weight;
    fused = (a * layer.scores + b * at::nan_to_num(external, 0.0)) / (a + b);
  } else {
    fused = reciprocal_rank_fusion({layer.scores, external}, {options_.internal_weight, options_.external_weight},
                                   options_.k);
  }
  fused_.add(layer.ids, fused);
  std::vector<int64_t> out;
  for (const int64_t row : top_rows(fused, options_.retrieve_size)) out.push_back(layer.ids[static_cast<size_t>(row)]);
  return out;
}

std::map<std::string, std::map<int64_t, double>> RrfMixture::expert_block_scores() const {
  return {{"internal", internal_.means()}, {"external", external_}};
}

}  // namespace svqa
