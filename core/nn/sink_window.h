#pragma once
// ReKV's attention once an answer's context outgrows its window (reference code Becomebright/ReKV,
// model/attention/rekv_attention.py, the question-answering path): while the context, sinks
// included, holds at most n_local keys it is plain causal attention; beyond that each query sees the
// keys within n_local of it (at their own positions) and, under the same softmax, the sinks it is
// further from as a segment of their own: keys un-rotated (position 0), the query rotated at
// n_local − 1, as the encoding window treats them.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "core/nn/rope.h"

namespace svqa {

struct SinkWindow {
  int64_t n_local = 0;                     // 0: no window, plain causal attention
  std::vector<at::Tensor> keys, values;    // per layer, the sinks [n_init, kv_heads, d], un-rotated
  RotaryTables query_tables;               // one row: position n_local − 1
};

// q [T, heads, d] un-rotated with its tables; k, v [S, kv_heads, d] the context with the queries'
// own keys last (query i at key index S − T + i), keys rotated, the sinks first. Output [T, heads·d].
at::Tensor attend_sink_window(const at::Tensor& q, const RotaryTables& q_tables, const at::Tensor& k,
                              const at::Tensor& v, const SinkWindow& window, int64_t layer);

}  // namespace svqa
