#pragma once
// The sliding-window prefill of ReKV (reference code Becomebright/ReKV, `ContextManager` in
// model/attention/kv_cache_manager.py), shared by every encoder built on it (ReKV, StreamKV,
// Mem-Stream). Exec blocks (a frame, a temporal patch, a summary frame) go through the LLM in order;
// each token attends causally to the previous `n_local` tokens of the stream (the system-prompt
// sinks first among them) and to the sinks that have entered the sink segment, at a fixed distance
// (keys at 0, queries at n_local − 1), under one joint softmax. A stream that fits is plain causal
// attention.
//
// Two rules, the reference's by default (WindowRules):
//   positions  window:   RoPE positions relative to the block's window, as the reference rotates
//                        them: the window's keys from stream index max(0, s − n_local) on at 0, 1, …
//                        for a block starting at s (float32 tables; angles stay below n_local + the
//                        block's length however long the stream). Every position shifts by one number
//                        per block (its `shift`), so relative distances, and Qwen2.5-VL's mRoPE rows,
//                        are those of the stream. The reference re-rotates the whole window per block;
//                        q·k depends only on the difference of the two angles, so svqa rotates keys and
//                        queries at position − `base` instead, `base` a recent block's shift, moved to
//                        the current one when the two are more than n_local / 4 apart: keys are rotated
//                        once on entry (from the un-rotated keys the window also keeps), the whole
//                        window again only when the base moves, and angles stay below 1.25 n_local +
//                        the block's length. The same attention in exact arithmetic (float rounding apart).
//              absolute: keys rotated once, on entry, at their stream positions (≈ 350k after an hour).
//   sink_entry migrate:     the sinks enter the sink segment min(n_init, tokens past n_local) at a
//                           time (the reference's `get_global_hidden_and_mask`: over several blocks when
//                           a block is shorter than n_init) and stay in the window until it slides past
//                           them, so a query may see a sink twice (in the window and as a sink);
//              all_at_once: all sinks enter the sink segment at the first block whose window would
//                           hold more than n_local tokens and leave the window then (seen once).
//              all_at_once_stay: all enter at that block and stay in the window (StreamKV's code:
//                           its ContextManager moves them when the init prompt ends and attends to
//                           them once a block's window holds more than n_local tokens).

#include <ATen/ATen.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "core/config/schema.h"
#include "core/memory/sink_kv.h"
#include "core/nn/attention.h"
#include "core/nn/kv_cache.h"
#include "core/nn/rope.h"
#include "models/backbones/backbone.h"

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
  // A sequence that goes through each layer after the blocks, in the same forward (StreamKV's
  // guidance prompt, which attends to the blocks' un-rotated q/k/v there): its hidden states
  // [T, hidden] (undefined: none), and its attention output at `layer` given its own Q/K/V and the blocks'.
  at::Tensor follower;
  std::function<at::Tensor(int64_t layer, const LayerQkv& own, const std::vector<LayerQkv>& blocks)> follow;
};

// The two rules above, as an encoder's options carry them.
struct WindowRules {
  bool relative_positions = true;  // positions: window
  bool migrate_sinks = true;  // sink_entry: migrate
  bool sinks_stay = false;    // with migrate_sinks false: all_at_once_stay (else all_at_once, leaving the window)
};

// The `positions` and `sink_entry` fields of an encoder's options struct (std::string members of
// those names) and the rules they name.
template <class Options>
void declare_window_rules(Schema<Options>& s) {
  s.field("positions", &Options::positions,
          "window: RoPE positions relative to each block's window, as ReKV's code (needs LLaVA-OneVision's "
          "1-D positions); absolute: stream positions, keys rotated once")
      .one_of({"window", "absolute"});
  s.field("sink_entry", &Options::sink_entry,
          "migrate: sinks join the sink segment min(n_init, tokens past n_local) at a time and stay in the "
          "window (ReKV's code); all_at_once: all at the first full window, leaving it; all_at_once_stay: all "
          "at the first full window, staying in it (StreamKV's code)")
      .one_of({"migrate", "all_at_once", "all_at_once_stay"});
}
template <class Options>
WindowRules window_rules(const Options& o) {
  return {o.positions == "window", o.sink_entry == "migrate", o.sink_entry == "all_at_once_stay"};
}

class SlidingWindow {
 public:
  explicit SlidingWindow(int64_t n_local, WindowRules rules = {}) : n_local_(n_local), rules_(rules) {}

  // A new stream: prefill `sink_ids` with plain causal attention; they open the window.
  void begin(Backbone& backbone, const std::vector<int64_t>& sink_ids);
  // Prefill `blocks` in order (layer by layer, block by block within a layer), sliding the window.
  std::vector<WindowOutput> prefill(Backbone& backbone, const std::vector<WindowInput>& blocks,
                                    const WindowHooks& hooks = {});

  const SinkKv& sinks() const { return sinks_; }
  int64_t n_local() const { return n_local_; }
  // Tokens the window has taken in so far, sinks included.
  int64_t tokens_seen() const { return next_index_; }
  // Sinks in the sink segment so far (0 until the window first fills, then up to n_init).
  int64_t sinks_entered() const { return sinks_entered_; }
  // Tokens of the window the next block attends to at `layer` (thinned by a window_tokens hook;
  // the sinks counted while they are still in the window).
  int64_t attended_tokens(int64_t layer) const {
    if (layer < 0 || layer >= static_cast<int64_t>(layers_.size())) return 0;  // before begin()
    const auto& kv = layers_[static_cast<size_t>(layer)].kv;
    return kv.defined() ? kv.size() : 0;
  }

 private:
  // One layer's window: the K/V of the tokens later tokens may attend to (keys rotated once at
  // their own positions when they enter under `absolute`, un-rotated under `window`), in one buffer
  // that slides (KvCache: entering tokens are written in place, leaving ones only move its start),
  // and each token's index in the stream (sinks from 0), ascending.
  struct Layer {
    KvCache kv;
    KvCache rotated;    // window positions: the keys rotated at position − base, in step with kv
    KvCache positions;  // each token's RoPE position [n, 1, 3], in step with kv
    std::deque<int64_t> index;
    int64_t base = 0;
    bool rotated_valid = false;  // `rotated` holds every key at position − base
  };

  // What prefill() fixes for each block before any layer runs (the same in every layer).
  struct BlockPlan {
    int64_t first = 0;    // stream index of its first token
    int64_t entered = 0;  // sinks in the sink segment once it has entered
    int64_t base = 0;     // under window positions, what keys and queries are rotated relative to
    at::Tensor positions;          // [3, n] on the device
    RotaryTables query_tables;     // its queries' rotation (and its keys', once they enter)
  };

  // Sinks in the sink segment once a block of `n` tokens starting at `first` has entered, `entered` before.
  int64_t sinks_after(int64_t entered, int64_t first, int64_t n) const;
  std::vector<BlockPlan> plan_blocks(const std::vector<WindowInput>& blocks, at::Device device) const;
  // Block `b`'s attention at layer `l` of the window (its un-rotated q/k/v there): returns the
  // attention output; the window then holds what later tokens may attend to.
  at::Tensor attend_block(int64_t l, size_t b, const LayerQkv& qkv, const BlockPlan& plan,
                          const RotaryTables& sink_query, const WindowHooks& hooks);
  // all_at_once: the sinks leave the window when they enter the sink segment.
  void drop_sinks_from_window(Layer& w) const;
  // The block's keys, values and positions enter the window (keys rotated once under absolute positions).
  void enter_window(Layer& w, const LayerQkv& qkv, const BlockPlan& plan) const;
  // Window positions: every key of the window rotated at position − base, into `rotated`.
  void rotate_window(Layer& w, int64_t base) const;
  // The attention segments of a block of `n` tokens whose K/V entered the window at row `past`:
  // the window keys every query sees, the edge (and the block's own triangle) under a mask, the sinks.
  std::vector<AttentionSegment> window_segments(const Layer& w, int64_t l, const at::Tensor& queries,
                                                const at::Tensor& raw_queries, int64_t past, int64_t n,
                                                const BlockPlan& plan, const RotaryTables& sink_query) const;
  // What later tokens may attend to: the block's tokens from row `past` (only `keep`, when defined).
  void keep_block_tokens(Layer& w, int64_t past, int64_t n, int64_t first, const at::Tensor& keep) const;
  // Drops the tokens no query from stream index `next` on can see.
  void slide(Layer& w, int64_t next) const;

  int64_t n_local_;
  WindowRules rules_;
  RotaryEmbedding rope_{2, 1.0};  // the backbone's, set by begin()
  SinkKv sinks_;
  std::vector<Layer> layers_;
  int64_t next_index_ = 0;
  int64_t sinks_entered_ = 0;
  int64_t base_ = 0;  // the last block's base (window positions)
  bool has_base_ = false;
};

}  // namespace svqa
