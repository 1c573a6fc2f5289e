#pragma once
// The reference path: a plain causal decoder with every token in context and a dense KV cache.
// Every memory strategy is tested against it (with everything retrieved it must give the same logits).

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/nn/kv_cache.h"
#include "core/nn/rope.h"
#include "core/nn/sink_window.h"
#include "models/backbones/backbone.h"
#include "models/backbones/deepstack.h"

namespace svqa {

// Embeddings and positions of [template before video, visual tokens (+ newline), template after];
// Qwen3-VL: each temporal patch's tokens inside its timestamp text.
struct PromptSequence {
  at::Tensor embeds;     // [T, hidden]
  at::Tensor positions;  // [3, T]
  at::Tensor ids;        // [T] int64: the text's token ids, -1 at visual tokens
  DeepStack deepstack;   // Qwen3-VL: the visual tokens' DeepStack features and rows
  int64_t text_tokens = 0, visual_tokens = 0;
};

// `visual` = backbone.encode_visual(input); `frame_times` = the frames' seconds (Qwen3-VL's
// timestamps); fps = the rate the frames were sampled at.
PromptSequence video_prompt_sequence(Backbone& backbone, const VisualInput& input, const VisualFeatures& visual,
                                     const std::vector<double>& frame_times, double fps, const std::string& question);

RotaryEmbedding text_rotary(const Manifest& m);

class FullContextDecoder {
 public:
  explicit FullContextDecoder(Backbone& backbone);

  // Starts from a given past instead of nothing: per layer rotated keys and values
  // [S_l, kv_heads, d] (undefined = empty) and the position the next token takes in that layer.
  void set_past(std::vector<at::Tensor> keys, std::vector<at::Tensor> values, std::vector<int64_t> next_positions);
  // The same from caches (undefined = empty), whose free room the following tokens are written into.
  void set_past(std::vector<KvCache> past, std::vector<int64_t> next_positions);

  // ReKV's attention past a window (core/nn/sink_window.h) for what follows; default: plain causal.
  void set_sink_window(SinkWindow window) { window_ = std::move(window); }

  // Runs `embeds` [T, hidden] at `positions` [3, T] (the same in every layer) after the past, with
  // DeepStack features added after the first layers; returns the last position's logits [vocab] (float32).
  at::Tensor forward(const at::Tensor& embeds, const at::Tensor& positions, const DeepStack& deepstack = {});
  // Keeps each layer's output [T, hidden] of the following forwards (for parity checks).
  void record_hidden_states(bool on) { record_ = on; }
  const std::vector<at::Tensor>& hidden_states() const { return recorded_; }
  // The same for text continuing the past: in each layer at that layer's next positions.
  at::Tensor forward_text(const at::Tensor& embeds);
  // Greedy continuation of the last forward: up to `max_new_tokens` ids, stopping after an EOS id.
  std::vector<int64_t> generate(const at::Tensor& last_logits, int64_t max_new_tokens);

 private:
  at::Tensor run(const at::Tensor& embeds, const std::vector<at::Tensor>& positions, const DeepStack& deepstack = {});

  Backbone& backbone_;
  RotaryEmbedding rope_;
  std::vector<KvCache> kv_;             // per layer [S, kv_heads, head_dim], keys rotated
  std::vector<int64_t> next_position_;  // per layer
  bool record_ = false;
  std::vector<at::Tensor> recorded_;
  SinkWindow window_;
};

}  // namespace svqa
