#pragma once
// What an encoding strategy's blocks carry and does to memory, and what a retrieval strategy reads
// from them, declared with each registration (strategies/*/register_builtin.cpp) so that `svqa
// validate` refuses a combination that cannot run — before any model loads — and `svqa list` shows
// which pairs fit. The run reads an encoder's traits from here too, never from the strategy object.

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "core/memory/context_assembler.h"
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

// How an encoder's memory comes to be: what its calls do to the bank.
enum class MemoryWrites {
  // Blocks are added as frames (and questions) come, never removed or changed (ReKV's window, MuKV,
  // StreamKV, Mem-Stream, StreamingTOM): a memory snapshot, a log of the blocks each call added,
  // replays it, and stream.kv_codec codes every block.
  Appends,
  // Blocks it added are also evicted or rewritten (compaction in place: HERMES, InfiniPot-V): a log of
  // added blocks cannot replay it.
  Rewrites,
  // The memory a question reads is built at the question, from its frames, in a bank of the encoder's
  // own (fresh_frames): nothing exists to save before the question, and stream.kv_codec, which codes
  // the stream's bank, never touches it.
  AtQuestion,
};

// What an encoding method does to memory and how it is answered from, declared with its registration
// beside what its blocks provide: the run and validation derive from it, never from the strategy
// object (so a wrapper — a reducer in front, a snapshot's recorder or replay — has nothing to forward).
// The defaults are ReKV's window.
struct EncoderTraits {
  MemoryWrites memory = MemoryWrites::Appends;
  // encode() reads the units' visual tokens; false (fresh_frames, which runs vision on the frames it
  // feeds at the question) spares the vision tower while the stream plays: units come with their
  // frames, spans and positions, and undefined tokens.
  bool reads_visual_tokens = true;
  // How retrieved blocks are placed at answer time unless the experiment names a policy
  // (stream.position_policy), and on a backbone with mRoPE where that differs (MuKV: the reference's
  // stacked layout is defined for 1-D RoPE only).
  PositionPolicy position_policy = PositionPolicy::Contiguous;
  std::optional<PositionPolicy> mrope_position_policy;
  // The bank's blocks, in id order, each sit at their own place in one stream: the `contiguous`
  // policy then reuses their positions as slots. False where blocks overlap (MuKV) or leave gaps.
  bool blocks_tile_stream = true;
  // ReKV's question-answering fallback: past this many context tokens (sinks first) the answer's
  // passes attend as the encoding window does (sinks + a sliding window; core/nn/sink_window.h).
  // 0: plain causal attention however long the context.
  int64_t answer_window = 0;

  PositionPolicy policy_on(bool mrope) const {
    return mrope && mrope_position_policy ? *mrope_position_policy : position_policy;
  }
};

struct EncoderProvides {
  Representatives representatives = Representatives::MeanKeyEveryLayer;
  std::set<Granularity> granularities{Granularity::Frame};  // what its blocks can be
  // Its memory is compacted in place into blocks spanning the whole past ([0, t], one per layer:
  // HERMES, InfiniPot-V): their start time says nothing of their tokens', so stream.context_window_s
  // cannot cut them by time (validation refuses the pair).
  bool whole_past_blocks = false;
  EncoderTraits traits{};  // what it does to memory: the defaults are ReKV's window
};

// "" when `encoder` (providing `provides`) can run under stream.context_window_s = `window_s`; else
// why not, naming both keys.
std::string context_window_problem(const std::string& encoder, const EncoderProvides& provides, double window_s);

// "" when the stream's memory under `encoder` can be saved and replayed (memory.cache set); else why
// not, naming both keys. Derived from traits.memory alone.
std::string snapshot_problem(const std::string& encoder, const EncoderTraits& traits);
// "" when stream.kv_codec `codec` codes the memory `encoder`'s questions read; else why not, naming both keys.
std::string codec_problem(const std::string& encoder, const EncoderTraits& traits, const std::string& codec);

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
