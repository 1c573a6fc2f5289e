#pragma once
// One LLM layer of new tokens over a context already assembled for that layer (sinks and memory,
// keys rotated): the question's retrieval pass runs it, and so does an encoder whose frames attend
// to its memory as the bank holds it (InfiniPot-V's compacted cache).

#include <ATen/ATen.h>

#include <cstdint>

#include "core/nn/kv_cache.h"
#include "core/nn/rope.h"
#include "core/nn/sink_window.h"
#include "models/backbones/backbone.h"

namespace svqa {

// The new tokens' keys (rotated by `tables`, their positions) and values are written after the
// context in `kv` (undefined: no context), they attend to it and causally to each other (past
// window.n_local, as the window says), and `kv` is cut back to the context. Returns the layer's
// output for `h` [T, hidden]; `qkv` = backbone.layer_qkv(layer, h).
at::Tensor layer_over_context(Backbone& backbone, int64_t layer, const at::Tensor& h, const LayerQkv& qkv,
                              const RotaryTables& tables, KvCache& kv, const SinkWindow& window);

}  // namespace svqa
