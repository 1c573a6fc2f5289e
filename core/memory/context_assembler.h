#pragma once
// Builds, for one layer, the past a question attends to: sinks + chosen blocks, rotated at the
// positions the position policy gives them.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/memory/kv_block.h"
#include "core/memory/memory_bank.h"
#include "core/memory/sink_kv.h"
#include "core/nn/kv_cache.h"
#include "core/nn/rope.h"

namespace svqa {

enum class PositionPolicy {
  // ReKV, StreamKV: sinks from 0, then the blocks in time order as if they had been the only ones
  // streamed: the i-th chosen block takes the positions the stream's i-th block of its shape had
  // (1-D RoPE: back to back; mRoPE: the stream's temporal spacing, each block's h/w grid kept),
  // else it is packed right after the previous one.
  Contiguous,
  Original,  // every token keeps the position it was encoded at; the question goes after the stream
  // MuKV's reference code: every token keeps its encode position, the blocks stay in the order
  // retrieval gives them, and the question goes after the context's length, where a Hugging Face
  // cache appends (its blocks all start right after the sinks, so they overlap). 1-D RoPE only.
  Stacked,
};
PositionPolicy position_policy_from_name(const std::string& name);  // "contiguous" | "original" | "stacked"
const char* position_policy_name(PositionPolicy policy);

struct LayerContext {
  KvCache kv;            // keys (rotated) and values in one buffer with room for the tokens that follow
  at::Tensor keys;       // [S, kv_heads, d] rotated: kv.keys() as assembled
  at::Tensor values;     // [S, kv_heads, d]: kv.values() as assembled
  at::Tensor positions;  // [3, S] the positions used
  int64_t next_position = 0;  // where the question's first token goes
  std::vector<int64_t> block_ids;  // the blocks in context order
};

// The order blocks take in a contiguous context: by the last frame they cover, then by bank id (the
// order they were encoded in: a StreamKV summary frame, spanning its segment, comes after the
// segment's frames).
bool stream_order(const KvBlock* a, const KvBlock* b);

// `blocks` must all be present in `layer`. Under `contiguous` they are put in stream order;
// otherwise they stay in the order given. `stream_end` is the position after the last encoded
// token of the stream (the question's place under `original`); `stream_slots` the encode
// positions of the stream's blocks in time order when they tile one stream (for `contiguous`;
// empty: blocks are packed back to back).
// `room`: tokens the buffer keeps free after the context (a question, a prompt, decoded tokens).
LayerContext assemble_layer(int64_t layer, const SinkKv& sinks, std::vector<const KvBlock*> blocks,
                            PositionPolicy policy, int64_t stream_end, const std::vector<at::Tensor>& stream_slots,
                            const RotaryEmbedding& rope, at::Device device, at::ScalarType dtype, int64_t room = 0);

// The same for blocks `ids` of the bank, each read from RAM or disk straight into the context buffer.
LayerContext assemble_layer(int64_t layer, const SinkKv& sinks, const MemoryBank& bank, const std::vector<int64_t>& ids,
                            PositionPolicy policy, int64_t stream_end, const std::vector<at::Tensor>& stream_slots,
                            const RotaryEmbedding& rope, at::Device device, at::ScalarType dtype, int64_t room = 0);

// The positions a block's tokens get under `contiguous` when it starts at `start`: its encode
// positions shifted so their minimum is `start` (relative layout kept, e.g. mRoPE's t/h/w grid).
at::Tensor contiguous_positions(const at::Tensor& encoded, int64_t start);

}  // namespace svqa
