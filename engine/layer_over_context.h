#pragma once
// The LLM's layers over memory. On forward_layers (models/backbones/layer_pass.h, the one per-layer
// Q/K/V loop), forward_over_memory runs new tokens over the memory as the bank holds it (the sinks'
// prefill, InfiniPot-V's and HERMES' frames, HERMES' pseudo queries); attend_over_context is one
// layer's attention of new tokens over a context already assembled for that layer (sinks and memory,
// keys rotated): the question's retrieval pass.

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
#include "models/backbones/layer_pass.h"

namespace svqa {

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

}  // namespace svqa
