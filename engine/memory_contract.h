#pragma once
// What an encoding strategy's blocks carry and what a retrieval strategy reads from them, declared
// with each registration (strategies/*/register_builtin.cpp) so that `svqa validate` refuses a pair
// that cannot run — before any model loads — and `svqa list` shows which pairs fit.

#include <set>
#include <string>

#include "core/memory/kv_block.h"

namespace svqa {

// The representative vectors a block carries (KvBlock::representatives).
enum class Representatives {
  None,  // retrieval: reads none (it goes by time, frames or its own embeddings)
  // ReKV's: the mean un-rotated key per kv head ([kv_heads · head_dim]), in every layer the block is
  // stored in; scored per layer against that layer's question queries, grouped per kv head (the
  // reference's score against the key repeated over the query heads, kv_block.h).
  MeanKeyEveryLayer,
  // MuKV's: the mean kept key rotated at its encode positions ([kv_heads · head_dim]), last layer only.
  RotatedKeyLastLayer,
};
const char* representatives_name(Representatives r);

struct EncoderProvides {
  Representatives representatives = Representatives::MeanKeyEveryLayer;
  std::set<Granularity> granularities{Granularity::Frame};  // what its blocks can be
  // Its memory is compacted in place into blocks spanning the whole past ([0, t], one per layer:
  // HERMES, InfiniPot-V): their start time says nothing of their tokens', so stream.context_window_s
  // cannot cut them by time (validation refuses the pair).
  bool whole_past_blocks = false;
};

// "" when `encoder` (providing `provides`) can run under stream.context_window_s = `window_s`; else
// why not, naming both keys.
std::string context_window_problem(const std::string& encoder, const EncoderProvides& provides, double window_s);

struct RetrievalNeeds {
  Representatives representatives = Representatives::None;  // None: any kind, or none at all
  std::set<Granularity> all_of;  // every one of these must be stored (MuKV's hierarchical mode: segments)
  std::set<Granularity> any_of;  // at least one of these (the recent/uniform baselines: frames); empty: any
};

// "" when a retrieval needing `needs` can read an encoder providing `provides`; else why not,
// naming both ("internal scores ... per layer, mukv_multigrain stores ... last layer only").
std::string contract_problem(const std::string& encoder, const EncoderProvides& provides, const std::string& retrieval,
                             const RetrievalNeeds& needs);

}  // namespace svqa
