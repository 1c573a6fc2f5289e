#include "strategies/encoding/mukv/mukv_block_prefill.h"

#include <algorithm>

#include "core/nn/attention.h"
#include "engine/layer_over_context.h"
#include "models/backbones/backbone.h"
#include "models/backbones/deepstack.h"
#include "models/backbones/full_context.h"

namespace svqa {

namespace {

// Every block's tokens as one sequence; `offset[b]` where block b starts in it.
struct JoinedBlocks {
  std::vector<at::Tensor> tokens, positions;
  std::vector<DeepStack> deepstack;
  std::vector<int64_t> offset{0};
  std::vector<int64_t> group;  // block of each token
  bool want_attention = false;  // a block keeps tokens by the attention paid to them
};

JoinedBlocks join_blocks(const std::vector<BlockInput>& blocks, at::Device device, at::ScalarType dtype) {
  JoinedBlocks j;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const auto& in = blocks[b];
    const int64_t n = in.tokens.size(0);
    j.tokens.push_back(in.tokens.to(device, dtype));
    j.positions.push_back(in.positions);
    if (in.deepstack.defined()) j.deepstack.push_back({in.deepstack, at::arange(j.offset.back(), j.offset.back() + n, at::kLong)});
    j.offset.push_back(j.offset.back() + n);
    j.group.insert(j.group.end(), static_cast<size_t>(n), static_cast<int64_t>(b));
    j.want_attention = j.want_attention || (kept_count(n, in.dcp.keep_ratio) < n && in.dcp.importance != Importance::Frequency);
  }
  return j;
}

// Several blocks: each sees the past and itself causally, never another block; one block: undefined.
at::Tensor block_visibility(const JoinedBlocks& j, size_t blocks, int64_t n_past, at::Device device) {
  if (blocks <= 1) return {};
  const auto g = at::tensor(j.group, at::kLong);
  const auto key_group = at::cat({at::full({n_past}, -1, at::kLong), g});
  const auto apart = (key_group.unsqueeze(0) == g.unsqueeze(1)) | (key_group.unsqueeze(0) < 0);
  return attention_visibility(j.offset.back(), n_past + j.offset.back(), AttentionMask{}, device) & apart.to(device);
}

// What the layers gave: per layer the un-rotated and rotated keys, the values, and the attention
// probabilities (with their layer weights) of the layers that score tokens.
struct PrefillOutput {
  std::vector<at::Tensor> keys, values, rotated, probs;
  std::vector<double> weights;
};

// Block b of the prefilled sequence with the tokens its DCP keeps.
PrefilledBlock cut_block(const BlockInput& in, const PrefillOutput& o, int64_t start, int64_t n, int64_t n_past,
                         at::Device device) {
  const auto own = [&](const at::Tensor& t) { return t.narrow(0, start, n); };
  at::Tensor kept = at::arange(n, at::kLong);
  if (kept_count(n, in.dcp.keep_ratio) < n) {
    at::Tensor attention;
    if (in.dcp.importance != Importance::Frequency) {
      // Attention this block's queries paid to its own keys (the past's columns are not scored).
      std::vector<at::Tensor> mine;
      for (const auto& pr : o.probs) mine.push_back(pr.narrow(1, start, n).narrow(2, n_past + start, n));
      attention = attention_importance(mine, o.weights, 0);
    }
    kept = select_tokens(token_importance(attention, own(o.rotated.back()), in.dcp), own(o.rotated.back()), in.dcp);
  }
  const auto index = kept.to(device);
  PrefilledBlock p;
  KvBlock& k = p.block;
  k.granularity = in.granularity;
  k.first_frame = in.first_frame, k.last_frame = in.last_frame;
  k.start_time = in.start_time, k.end_time = in.end_time;
  k.positions = in.positions.to(at::kCPU).index_select(1, kept);
  const auto layers = static_cast<int64_t>(o.keys.size());
  k.representatives.resize(static_cast<size_t>(layers));
  for (int64_t l = 0; l < layers; ++l) {
    k.keys.push_back(own(o.keys[l]).index_select(0, index));
    k.values.push_back(own(o.values[l]).index_select(0, index));
    p.rotated.push_back(own(o.rotated[l]).index_select(0, index));
  }
  k.representatives.back() = p.rotated.back().to(at::kFloat).mean(0).flatten();
  return p;
}

}  // namespace

std::vector<PrefilledBlock> prefill_blocks(Backbone& backbone, const std::vector<BlockInput>& blocks,
                                           const std::vector<at::Tensor>& past_keys,
                                           const std::vector<at::Tensor>& past_values,
                                           const std::vector<std::pair<int64_t, double>>& attention_layers) {
  if (blocks.empty()) return {};  // a unit with segments only: nothing of its own to prefill
  const auto device = backbone.device();
  const int64_t layers = backbone.num_layers();
  const int64_t n_past = past_keys.back().defined() ? past_keys.back().size(0) : 0;
  const JoinedBlocks j = join_blocks(blocks, device, backbone.dtype());
  const auto tables = text_rotary(backbone.manifest()).tables(at::cat(j.positions, 1).to(device));
  const at::Tensor visible = block_visibility(j, blocks.size(), n_past, device);

  PrefillOutput o{std::vector<at::Tensor>(layers), std::vector<at::Tensor>(layers), std::vector<at::Tensor>(layers), {}, {}};
  const auto attend_layer = [&](int64_t l, size_t, const at::Tensor&, const LayerQkv& qkv) {
    o.rotated[l] = apply_rotary(qkv.k, tables);
    const auto k = past_keys[l].defined() ? at::cat({past_keys[l], o.rotated[l]}) : o.rotated[l];
    const auto v = past_keys[l].defined() ? at::cat({past_values[l], qkv.v}) : qkv.v;
    const auto scoring = std::find_if(attention_layers.begin(), attention_layers.end(),
                                      [&](const auto& lw) { return lw.first == l; });
    const bool need = j.want_attention && scoring != attention_layers.end();
    const auto q = apply_rotary(qkv.q, tables);
    auto attn = visible.defined() ? attend_masked(q, k, v, visible, need) : attend(q, k, v, AttentionMask{}, need);
    if (need) o.probs.push_back(std::move(attn.probs)), o.weights.push_back(scoring->second);
    o.keys[l] = qkv.k;
    o.values[l] = qkv.v;
    return attn.out;
  };
  forward_layers(backbone, {{at::cat(j.tokens)}, {concat_deepstack(j.deepstack)}, attend_layer});

  std::vector<PrefilledBlock> out;
  for (size_t b = 0; b < blocks.size(); ++b)
    out.push_back(cut_block(blocks[b], o, j.offset[b], j.offset[b + 1] - j.offset[b], n_past, device));
  return out;
}

}  // namespace svqa
