#pragma once
// The LLM's layers over new tokens. forward_layers is the one per-layer Q/K/V loop every encoder's
// prefill runs (a caller says only what each layer's attention is); on it, forward_over_memory runs
// new tokens over the memory as the bank holds it (the sinks' prefill, InfiniPot-V's and HERMES'
// frames, HERMES' pseudo queries). layer_over_context is one layer of new tokens over a context
// already assembled for that layer (sinks and memory, keys rotated): the question's retrieval pass.

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "core/memory/memory_bank.h"
#include "core/memory/sink_kv.h"
#include "core/nn/kv_cache.h"
#include "core/nn/rope.h"
#include "core/nn/sink_window.h"
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

// New tokens through every layer over the memory as `bank` holds it: at each layer they attend to
// [sinks | every block the layer stores, each at its own positions (PositionPolicy::Original)] and
// causally to themselves, rotated at `positions` ([3, T], one for every layer or one per layer).
struct MemoryPass {
  const SinkKv* sinks = nullptr;     // null: none
  const MemoryBank* bank = nullptr;  // null: no memory
  std::vector<at::Tensor> positions;
  bool memory_attention = false;     // also return the attention each memory token gets
};

struct MemoryPassOutput {
  std::vector<at::Tensor> keys, values;  // per layer the new tokens' un-rotated K/V [T, kv_heads, d]
  // With memory_attention, per layer [memory tokens] float32 on the CPU: the softmax attention they
  // get, averaged over heads and the new tokens (sinks and the new tokens' own keys left out).
  std::vector<at::Tensor> memory_attention;
};

MemoryPassOutput forward_over_memory(Backbone& backbone, const at::Tensor& h, const MemoryPass& pass);

// The new tokens' keys (rotated by `tables`, their positions) and values are written after the
// context in `kv` (undefined: no context), they attend to it and causally to each other (past
// window.n_local, as the window says), and `kv` is cut back to the context. Returns the attention
// output for `qkv` = backbone.layer_qkv(layer, h) [T, heads * head_dim].
at::Tensor attend_over_context(int64_t layer, const LayerQkv& qkv, const RotaryTables& tables, KvCache& kv,
                               const SinkWindow& window);

// The layer's output for `h` [T, hidden] after attend_over_context.
at::Tensor layer_over_context(Backbone& backbone, int64_t layer, const at::Tensor& h, const LayerQkv& qkv,
                              const RotaryTables& tables, KvCache& kv, const SinkWindow& window);

}  // namespace svqa
