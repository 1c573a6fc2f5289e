#pragma once
// The one per-layer Q/K/V loop of the tree: hidden states through the LLM's layers, the caller saying
// only what each layer's attention is (every encoder's prefill, the question's retrieval pass, the
// full-context reference decoder).

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "models/backbones/backbone.h"
#include "models/backbones/deepstack.h"

namespace svqa {

// Sequences of hidden states run through the layers together: at each layer, one after another.
struct LayerPass {
  std::vector<at::Tensor> hidden;     // per sequence [T, hidden]
  std::vector<DeepStack> deepstack;   // per sequence (Qwen3-VL), or empty: none
  // Layer `layer`'s attention output [T, heads * head_dim] for sequence `sequence` (hidden states
  // `h`, its un-rotated Q/K/V there); the caller keeps what it needs of them (K/V, scores). An
  // undefined tensor stops the pass there (the caller needed only that layer's Q/K/V).
  std::function<at::Tensor(int64_t layer, size_t sequence, const at::Tensor& h, const LayerQkv& qkv)> attend;
};

// Runs `pass` through every layer (h ← layer_out(h, attend(...)), then DeepStack), or until attend
// stops it; returns each sequence's hidden states after the last layer it went through.
std::vector<at::Tensor> forward_layers(Backbone& backbone, LayerPass pass);

}  // namespace svqa
