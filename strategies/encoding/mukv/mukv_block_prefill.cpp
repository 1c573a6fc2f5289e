#include "strategies/encoding/mukv/mukv_block_prefill.h"

#include <algorithm>

#include "core/nn/attention.h"
#include "engine/layer_over_context.h"
#include "models/backbones/backbone.h"
#include "models/backbones/deepstack.h"
#include "models/backbones/full_context.h"

namespace svqa {

std::vector<PrefilledBlock> prefill_blocks(Backbone& backbone, const std::vector<BlockInput>& blocks,
                                           const std::vector<at::Tensor>& past_keys,
                                           const std::vector<at::Tensor>& past_values,
                                           const std::vector<std::pair<int64_t, double>>& attention_layers) {
  if (blocks.empty()) return {};  // a unit with segments only: nothing of its own to prefill
  const auto device = backbone.device();
  const auto dtype = backbone.dtype();
  const int64_t layers = backbone.num_layers();
  const int64_t n_past = past_keys.back().defined() ? past_keys.back().size(0) : 0;

  // One sequence of every block's tokens; `offset[b]` where block b starts in it.
  std::vector<at::Tensor> tokens, positions;
  std::vector<DeepStack> deepstack;
  std::vector<int64_t> offset{0};
  std::vector<int64_t> group;  // block of each token
  bool want_attention = false;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const auto& in = blocks[b];
    const int64_t n = in.tokens.size(0);
    tokens.push_back(in.tokens.to(device, dtype));
    positions.push_back(in.positions);
    if (in.deepstack.defined()) deepstack.push_back({in.deepstack, at::arange(offset.back(), offset.back() + n, at::kLong)});
    offset.push_back(offset.back() + n);
    group.insert(group.end(), static_cast<size_t>(n), static_cast<int64_t>(b));
    want_attention = want_attention || (kept_count(n, in.dcp.keep_ratio) < n && in.dcp.importance != Importance::Frequency);
  }
  const auto tables = text_rotary(backbone.manifest()).tables(at::cat(positions, 1).to(device));
  at::Tensor visible;  // several blocks: each sees the past and itself causally, never another block
  if (blocks.size() > 1) {
    const auto g = at::tensor(group, at::kLong);
    const auto key_group = at::cat({at::full({n_past}, -1, at::kLong), g});
    const auto apart = (key_group.unsqueeze(0) == g.unsqueeze(1)) | (key_group.unsqueeze(0) < 0);
    visible = attention_visibility(offset.back(), n_past + offset.back(), AttentionMask{}, device) & apart.to(device);
  }

  std::vector<at::Tensor> keys(layers), values(layers), rotated(layers), probs;
  std::vector<double> weights;
  const auto attend_layer = [&](int64_t l, size_t, const at::Tensor&, const LayerQkv& qkv) {
    rotated[l] = apply_rotary(qkv.k, tables);
    const auto k = past_keys[l].defined() ? at::cat({past_keys[l], rotated[l]}) : rotated[l];
    const auto v = past_keys[l].defined() ? at::cat({past_values[l], qkv.v}) : qkv.v;
    const auto scoring = std::find_if(attention_layers.begin(), attention_layers.end(),
                                      [&](const auto& lw) { return lw.first == l; });
    const bool need = want_attention && scoring != attention_layers.end();
    const auto q = apply_rotary(qkv.q, tables);
    auto attn = visible.defined() ? attend_masked(q, k, v, visible, need) : attend(q, k, v, AttentionMask{}, need);
    if (need) probs.push_back(std::move(attn.probs)), weights.push_back(scoring->second);
    keys[l] = qkv.k;
    values[l] = qkv.v;
    return attn.out;
  };
  forward_layers(backbone, {{at::cat(tokens)}, {concat_deepstack(deepstack)}, attend_layer});

  std::vector<PrefilledBlock> out;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const auto& in = blocks[b];
    const int64_t start = offset[b], n = offset[b + 1] - start;
    const auto own = [&](const at::Tensor& t) { return t.narrow(0, start, n); };
    at::Tensor kept = at::arange(n, at::kLong);
    if (kept_count(n, in.dcp.keep_ratio) < n) {
      at::Tensor attention;
      if (in.dcp.importance != Importance::Frequency) {
        // Attention this block's queries paid to its own keys (the past's columns are not scored).
        std::vector<at::Tensor> mine;
        for (const auto& pr : probs) mine.push_back(pr.narrow(1, start, n).narrow(2, n_past + start, n));
        attention = attention_importance(mine, weights, 0);
      }
      kept = select_tokens(token_importance(attention, own(rotated.back()), in.dcp), own(rotated.back()), in.dcp);
    }
    const auto index = kept.to(device);
    PrefilledBlock p;
    KvBlock& k = p.block;
    k.granularity = in.granularity;
    k.first_frame = in.first_frame, k.last_frame = in.last_frame;
    k.start_time = in.start_time, k.end_time = in.end_time;
    k.positions = in.positions.to(at::kCPU).index_select(1, kept);
    k.representatives.resize(layers);
    for (int64_t l = 0; l < layers; ++l) {
      k.keys.push_back(own(keys[l]).index_select(0, index));
      k.values.push_back(own(values[l]).index_select(0, index));
      p.rotated.push_back(own(rotated[l]).index_select(0, index));
    }
    k.representatives.back() = p.rotated.back().to(at::kFloat).mean(0).flatten();
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace svqa
