#pragma once
// The sliding-window prefill of ReKV (reference code Becomebright/ReKV, `ContextManager`), shared by
// every encoder built on it (ReKV, StreamKV, Mem-Stream). Exec blocks (a frame, a temporal patch, a
// summary frame) go through the LLM in order; each token attends causally to the previous `n_local`
// tokens of the stream (un-rotated keys rotated at their own positions, so relative distances are
// true) and, once the stream has outgrown the window, to the system-prompt sinks at a fixed
// distance (keys at 0, queries at n_local − 1) under one joint softmax. Until then the sinks are
// ordinary window tokens, so a stream that fits is plain causal attention.
//
// ReKV's and StreamKV's reference codes switch to the separate sink segment at the same moment
// (the first exec block whose window would hold more than n_local tokens); StreamKV's "every frame
// offloaded at once" is how every svqa encoder stores blocks anyway. Unlike both reference codes the
// sinks then leave the window, so no token attends to them twice.

#include <ATen/ATen.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "core/memory/sink_kv.h"
#include "core/nn/kv_cache.h"
#include "models/backbone.h"

namespace svqa {

// One exec block of input.
struct WindowInput {
  at::Tensor tokens;     // [n, hidden] input embeddings
  at::Tensor positions;  // [3, n] RoPE positions
  at::Tensor deepstack;  // Qwen3-VL: [K, n, hidden] added after layers 0..K-1 (VisualUnit::deepstack); else undefined
};

// What an exec block leaves per layer: its un-rotated keys and values [n, kv_heads, d].
struct WindowOutput {
  std::vector<at::Tensor> keys, values;
};

struct WindowHooks {
  // Which of block `block`'s tokens later tokens may attend to at `layer` (int64 indices into the
  // block, e.g. Mem-Stream's AKS keeps the tokens that changed most); undefined: all. The block
  // itself attends densely, and the window still spans n_local tokens of the stream.
  std::function<at::Tensor(int64_t layer, size_t block, const LayerQkv& qkv)> window_tokens;
  // Called at each layer once every block has gone through it, with the blocks' un-rotated q/k/v
  // there (StreamKV's guidance prompt attends to them in the same forward).
  std::function<void(int64_t layer, const std::vector<LayerQkv>& blocks)> after_layer;
};

class SlidingWindow {
 public:
  explicit SlidingWindow(int64_t n_local) : n_local_(n_local) {}

  // A new stream: prefill `sink_ids` with plain causal attention; they open the window.
  void begin(Backbone& backbone, const std::vector<int64_t>& sink_ids);
  // Prefill `blocks` in order (layer by layer, block by block within a layer), sliding the window.
  std::vector<WindowOutput> prefill(Backbone& backbone, const std::vector<WindowInput>& blocks,
                                    const WindowHooks& hooks = {});

  const SinkKv& sinks() const { return sinks_; }
  int64_t n_local() const { return n_local_; }
  // Tokens the window has taken in so far, sinks included.
  int64_t tokens_seen() const { return next_index_; }
  // Tokens of the window the next block attends to at `layer` (thinned by a window_tokens hook;
  // the sinks counted while they are still in the window, not once they are their own segment).
  int64_t attended_tokens(int64_t layer) const {
    if (layer < 0 || layer >= static_cast<int64_t>(layers_.size())) return 0;  // before begin()
    const auto& kv = layers_[static_cast<size_t>(layer)].kv;
    return kv.defined() ? kv.size() : 0;
  }

 private:
  // One layer's window: the K/V of the tokens later tokens may attend to, keys rotated once at
  // their own positions when they enter, in one buffer that slides (KvCache: entering tokens are
  // written in place, leaving ones only move its start), and each token's index in the stream
  // (sinks from 0), ascending.
  struct Layer {
    KvCache kv;
    std::deque<int64_t> index;
  };

  int64_t n_local_;
  SinkKv sinks_;
  std::vector<Layer> layers_;
  int64_t next_index_ = 0;
  bool sinks_separate_ = false;
};

}  // namespace svqa
