#pragma once
// What flows between the runner and the strategies: visual units of the stream, the sinks, and
// the question a retrieval strategy serves.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/memory/sink_kv.h"

namespace svqa {

// The smallest group of frames the backbone turns into tokens: one frame (LLaVA-OV), or one
// temporal patch of two frames (Qwen2.5-VL).
struct VisualUnit {
  at::Tensor tokens;     // [n, hidden] visual tokens (Qwen3-VL: inside the unit's timestamp text)
  at::Tensor deepstack;  // Qwen3-VL: [K, n, hidden] DeepStack features row by row with tokens (zeros at
                         // the text), added after LLM layers 0..K-1 (models/backbones/deepstack.h); else undefined
  at::Tensor positions;  // [3, n] positions in the stream (after the sinks), as the backbone lays them out
  int64_t text_before = 0, text_after = 0;  // Qwen3-VL: rows of timestamp text around the visual tokens
  at::Tensor rgb;        // uint8 [f, H, W, 3] source frames of the unit
  int64_t first_frame = 0, last_frame = 0;
  double start_time = 0, end_time = 0;
};

// A question as retrieval strategies see it.
struct QuestionInfo {
  std::string id;
  std::string text;  // the raw question (what ReKV's retrieval pass runs)
  double time = 0;   // seconds into the stream; every block in the bank ends at or before it
  // stream.context_window_s: the question may use only what starts at or after this (seconds; the
  // bank it is answered from holds nothing earlier; fresh_frames samples its frames from there on).
  double window_start = 0;
  const SinkKv* sinks = nullptr;  // the stream's attention sinks (set by answer_question)
};

// One layer's view of the question inside the retrieval pass.
struct LayerQuery {
  int64_t layer = 0;
  at::Tensor queries;  // [T, heads, d] un-rotated, the question tokens
  at::Tensor keys;     // [T, kv_heads, d] un-rotated
  int pass = 0;        // which retrieval pass (RetrievalStrategy::retrieval_passes)
};

}  // namespace svqa
