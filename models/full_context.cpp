#include "models/full_context.h"

#include <algorithm>
#include <stdexcept>

#include "core/nn/attention.h"
#include "models/video_positions.h"
#include "models/video_prompt.h"

namespace svqa {
namespace {

at::Tensor ids_tensor(const std::vector<int64_t>& ids) { return at::tensor(ids, at::kLong); }

}  // namespace

RotaryEmbedding text_rotary(const Manifest& m) {
  return RotaryEmbedding(m.text.head_dim, m.text.rope_theta, m.text.mrope_section);
}

PromptSequence video_prompt_sequence(Backbone& backbone, const VisualInput& input, const at::Tensor& visual,
                                     double fps, const std::string& question) {
  const auto ids = video_prompt_ids(backbone.manifest(), backbone.tokenizer(), question);
  const int64_t n_before = static_cast<int64_t>(ids.before.size());
  std::vector<at::Tensor> embeds{backbone.embed(ids_tensor(ids.before)), visual.to(backbone.device(), backbone.dtype())};
  std::vector<at::Tensor> positions{text_positions(0, n_before),
                                    video_positions(backbone.manifest(), input, visual.size(0), n_before, fps)};
  int64_t next = next_position(positions.back());
  if (auto newline = backbone.video_newline()) {
    embeds.push_back(newline->to(backbone.device(), backbone.dtype()));
    positions.push_back(text_positions(next++, 1));
  }
  embeds.push_back(backbone.embed(ids_tensor(ids.after)));
  positions.push_back(text_positions(next, static_cast<int64_t>(ids.after.size())));
  PromptSequence seq{at::cat(embeds, 0), at::cat(positions, 1), 0, visual.size(0)};
  seq.text_tokens = seq.embeds.size(0) - seq.visual_tokens;
  return seq;
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

at::Tensor FullContextDecoder::forward(const at::Tensor& embeds, const at::Tensor& positions) {
  return run(embeds, std::vector<at::Tensor>(kv_.size(), positions));
}

at::Tensor FullContextDecoder::forward_text(const at::Tensor& embeds) {
  std::vector<at::Tensor> positions;
  for (const int64_t next : next_position_) positions.push_back(text_positions(next, embeds.size(0)));
  return run(embeds, positions);
}

at::Tensor FullContextDecoder::run(const at::Tensor& embeds, const std::vector<at::Tensor>& positions) {
  at::Tensor h = embeds.to(backbone_.device(), backbone_.dtype());
  for (int64_t l = 0; l < backbone_.num_layers(); ++l) {
    const auto tables = rope_.tables(positions[l].to(backbone_.device()));
    auto qkv = backbone_.layer_qkv(l, h);
    auto& kv = kv_[static_cast<size_t>(l)];
    if (kv.defined()) {
      auto [k, v] = kv.extend(qkv.k.size(0));
      k.copy_(qkv.k);
      apply_rotary_(k, tables);
      v.copy_(qkv.v);
    } else {
      kv = KvCache::wrap(apply_rotary(qkv.k, tables), qkv.v);
    }
    h = backbone_.layer_out(l, h, attend_sink_window(qkv.q, tables, kv.keys(), kv.values(), window_, l));
    next_position_[l] = std::max(next_position_[l], next_position(positions[l]));
  }
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
