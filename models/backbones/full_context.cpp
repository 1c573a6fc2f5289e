#include "models/backbones/full_context.h"

#include <algorithm>
#include <stdexcept>

#include "core/nn/attention.h"
#include "models/backbones/layer_pass.h"
#include "models/backbones/video_positions.h"
#include "models/backbones/video_prompt.h"

namespace svqa {
namespace {

at::Tensor ids_tensor(const std::vector<int64_t>& ids) { return at::tensor(ids, at::kLong); }

}  // namespace

RotaryEmbedding text_rotary(const Manifest& m) {
  return RotaryEmbedding(m.text.head_dim, m.text.rope_theta, m.text.mrope_section,
                         m.text.mrope_interleaved ? MropeLayout::Interleaved : MropeLayout::Blocks);
}

namespace {

// The growing prompt: embeddings, positions and ids, piece by piece.
struct SequenceBuilder {
  explicit SequenceBuilder(Backbone& b) : backbone(b) {}
  Backbone& backbone;
  std::vector<at::Tensor> embeds, positions, ids;
  std::vector<DeepStack> deepstack;
  int64_t rows = 0, next = 0, visual = 0;

  void text(const std::vector<int64_t>& tokens) {
    const auto n = static_cast<int64_t>(tokens.size());
    embeds.push_back(backbone.embed(ids_tensor(tokens)));
    positions.push_back(text_positions(next, n));
    ids.push_back(ids_tensor(tokens));
    rows += n;
    next += n;
  }
  // Visual tokens (counted as visual unless `counted` is false: LLaVA-OV's newline embedding).
  void tokens(const at::Tensor& t, const at::Tensor& pos, const at::Tensor& features, int64_t begin, bool counted = true) {
    const int64_t n = t.size(0);
    embeds.push_back(t.to(backbone.device(), backbone.dtype()));
    positions.push_back(pos);
    ids.push_back(at::full({n}, -1, at::kLong));
    if (features.defined()) deepstack.push_back(deepstack_slice(features, begin, n, rows));
    rows += n;
    if (counted) visual += n;
    next = next_position(pos);
  }
  PromptSequence done() {
    PromptSequence seq{at::cat(embeds, 0), at::cat(positions, 1), at::cat(ids, 0), concat_deepstack(deepstack), 0, visual};
    seq.text_tokens = seq.embeds.size(0) - visual;
    return seq;
  }
};

}  // namespace

PromptSequence video_prompt_sequence(Backbone& backbone, const VisualInput& input, const VisualFeatures& visual,
                                     const std::vector<double>& frame_times, double fps, const std::string& question) {
  const Manifest& m = backbone.manifest();
  const Tokenizer& tok = backbone.tokenizer();
  const auto ids = video_prompt_ids(m, tok, question);
  SequenceBuilder b(backbone);
  b.text(ids.before);
  if (m.architecture == Architecture::Qwen3_VL) {
    const auto seconds = temporal_patch_seconds(frame_times, m.vision.temporal_patch_size);
    const int64_t t = input.grid_thw[0], per_patch = visual.tokens.size(0) / t;
    if (static_cast<int64_t>(seconds.size()) != t)
      throw std::invalid_argument("video prompt: " + std::to_string(frame_times.size()) + " frame times for " +
                                  std::to_string(t) + " temporal patches");
    for (int64_t k = 0; k < t; ++k) {
      const auto frame = frame_prompt_ids(m, tok, seconds[static_cast<size_t>(k)]);
      b.text(frame.before);
      const VisualInput one{{}, {1, input.grid_thw[1], input.grid_thw[2]}};
      b.tokens(visual.tokens.narrow(0, k * per_patch, per_patch), video_positions(m, one, per_patch, b.next, fps),
               visual.deepstack, k * per_patch);
      b.text(frame.after);
    }
  } else {
    b.tokens(visual.tokens, video_positions(m, input, visual.tokens.size(0), b.next, fps), visual.deepstack, 0);
    if (auto newline = backbone.video_newline()) b.tokens(*newline, text_positions(b.next, 1), {}, 0, false);
  }
  b.text(ids.after);
  return b.done();
}

FullContextDecoder::FullContextDecoder(Backbone& backbone)
    : backbone_(backbone),
      rope_(text_rotary(backbone.manifest())),
      kv_(static_cast<size_t>(backbone.num_layers())),
      next_position_(backbone.num_layers(), 0) {}

void FullContextDecoder::set_past(std::vector<at::Tensor> keys, std::vector<at::Tensor> values,
                                  std::vector<int64_t> next_positions) {
  if (keys.size() != values.size())
    throw std::invalid_argument("decoder: a past needs keys, values and a next position for every layer");
  std::vector<KvCache> past(keys.size());
  for (size_t l = 0; l < keys.size(); ++l)
    if (keys[l].defined()) past[l] = KvCache::wrap(std::move(keys[l]), std::move(values[l]));
  set_past(std::move(past), std::move(next_positions));
}

void FullContextDecoder::set_past(std::vector<KvCache> past, std::vector<int64_t> next_positions) {
  const auto n = static_cast<size_t>(backbone_.num_layers());
  if (past.size() != n || next_positions.size() != n)
    throw std::invalid_argument("decoder: a past needs keys, values and a next position for every layer");
  kv_ = std::move(past);
  next_position_ = std::move(next_positions);
}

at::Tensor FullContextDecoder::forward(const at::Tensor& embeds, const at::Tensor& positions, const DeepStack& deepstack) {
  return run(embeds, std::vector<at::Tensor>(kv_.size(), positions), deepstack);
}

at::Tensor FullContextDecoder::forward_text(const at::Tensor& embeds) {
  std::vector<at::Tensor> positions;
  for (const int64_t next : next_position_) positions.push_back(text_positions(next, embeds.size(0)));
  return run(embeds, positions);
}

at::Tensor FullContextDecoder::run(const at::Tensor& embeds, const std::vector<at::Tensor>& positions,
                                   const DeepStack& deepstack) {
  recorded_.clear();
  const auto attend = [&](int64_t l, size_t, const at::Tensor& h, const LayerQkv& qkv) {
    if (record_ && l > 0) recorded_.push_back(h);  // layer l - 1's output
    const auto tables = rope_.tables(positions[l].to(backbone_.device()));
    auto& kv = kv_[static_cast<size_t>(l)];
    if (kv.defined()) {
      auto [k, v] = kv.extend(qkv.k.size(0));
      k.copy_(qkv.k);
      apply_rotary_(k, tables);
      v.copy_(qkv.v);
    } else {
      kv = KvCache::wrap(apply_rotary(qkv.k, tables), qkv.v);
    }
    next_position_[l] = std::max(next_position_[l], next_position(positions[l]));
    return attend_sink_window(qkv.q, tables, kv.keys(), kv.values(), window_, l);
  };
  const at::Tensor h =
      forward_layers(backbone_, {{embeds.to(backbone_.device(), backbone_.dtype())}, {deepstack}, attend}).front();
  if (record_) recorded_.push_back(h);
  return backbone_.logits(h.narrow(0, h.size(0) - 1, 1)).squeeze(0).to(at::kFloat);
}

std::vector<int64_t> FullContextDecoder::generate(const at::Tensor& last_logits, int64_t max_new_tokens) {
  const auto& eos = backbone_.manifest().eos_ids;
  std::vector<int64_t> out;
  at::Tensor logits = last_logits;
  while (static_cast<int64_t>(out.size()) < max_new_tokens) {
    const int64_t id = logits.argmax().item<int64_t>();
    out.push_back(id);
    if (std::find(eos.begin(), eos.end(), id) != eos.end()) break;
    // Decoded tokens continue one past the largest position so far (HF's rope_deltas rule).
    logits = forward_text(backbone_.embed(ids_tensor({id})));
  }
  return out;
}

}  // namespace svqa
