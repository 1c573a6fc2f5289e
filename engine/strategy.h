#pragma once
// The two plugin interfaces. A strategy is one file in strategies/encoding/ or strategies/retrieval/,
// registered in that folder's register_builtin.cpp with a typed options struct.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/memory/context_assembler.h"
#include "core/memory/memory_bank.h"
#include "engine/stream_types.h"

namespace svqa {

class Backbone;

// Frames → blocks in the bank. Owns its working state (sinks, local window) for the current stream.
class EncodingStrategy {
 public:
  virtual ~EncodingStrategy() = default;
  // A new stream: forget the previous one, prefill `sink_ids` (the system prompt) as attention sinks.
  virtual void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) = 0;
  // Encode the next units of the stream (in order) and add their blocks to the bank.
  virtual void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) = 0;
  virtual const SinkKv& sinks() const = 0;
  // Position the next visual token of the stream would get (first row): the end of the stream so far.
  virtual int64_t next_position() const = 0;
  // A question is about to be answered from the bank (every frame up to its time is encoded):
  // the last chance to change the bank before retrieval, e.g. StreamKV encodes its open segment.
  virtual void before_question(Backbone& backbone, const QuestionInfo& question, MemoryBank& bank) {
    (void)backbone, (void)question, (void)bank;
  }
  // Whether encode() reads the units' visual tokens; false (fresh_frames, which runs vision on the frames
  // it feeds at the question) spares the vision tower while the stream plays: units come with their
  // frames, spans and positions, and undefined tokens.
  virtual bool needs_visual_tokens() const { return true; }
  // A bank built for the current question by before_question (fresh_frames: its N frames prefilled
  // afresh), answered from instead of the stream's; the time before_question took is then part of
  // the question's time to first token. nullptr: the stream's bank.
  virtual const MemoryBank* question_bank() const { return nullptr; }
  // Fields of its own for the question's record, written under "extra" in predictions.jsonl
  // (key them by the strategy's name). Called after the question is answered.
  virtual void add_record_fields(nlohmann::json& extra) const { (void)extra; }
  // Whether the stream's memory can be saved and replayed (engine/snapshot): false where the
  // memory a question reads is built at the question from frames (fresh_frames' question_bank).
  virtual bool memory_snapshots() const { return true; }
  // How retrieved blocks are placed at answer time unless the experiment names a policy.
  virtual PositionPolicy position_policy() const { return PositionPolicy::Contiguous; }
  // Whether the bank's blocks, in id order, each sit at their own place in one stream: the
  // `contiguous` policy then reuses their positions as slots. False where blocks overlap (MuKV).
  virtual bool blocks_tile_stream() const { return true; }
  // ReKV's question-answering fallback: past this many context tokens (sinks first) the answer's
  // passes attend as the encoding window does (sinks + a sliding window; core/nn/sink_window.h).
  // 0: plain causal attention however long the context.
  virtual int64_t answer_window() const { return 0; }
};

// Question → blocks per layer. `select` is called inside the retrieval pass at every layer, with
// that layer's question queries (which already attended to the blocks chosen at earlier layers);
// strategies that choose once answer the same at every layer.
class RetrievalStrategy {
 public:
  virtual ~RetrievalStrategy() = default;
  virtual void begin_question(Backbone& backbone, const QuestionInfo& question, const MemoryBank& bank) {
    (void)backbone, (void)question, (void)bank;
  }
  // How many times the question's retrieval pass runs (StreamKV: a probe pass that scores every
  // layer, then the pass that selects); only the last pass's selection becomes the context.
  virtual int retrieval_passes() const { return 1; }
  // false: the strategy uses the memory as it is (memory_as_is): no retrieval at question time. The
  // answer's context in each layer is every block that layer stores, in id order, placed by the
  // position policy; neither begin_question nor select is called and the question is not run.
  virtual bool retrieves() const { return true; }
  // Block ids for this layer, each stored in it (any order; the context assembler orders them).
  virtual std::vector<int64_t> select(const LayerQuery& query, const MemoryBank& bank) = 0;
  // false: select() ignores the question's queries (it chose in begin_question), so the retrieval
  // pass does not run the question at all and select() gets a LayerQuery without tensors.
  virtual bool selects_per_layer() const { return true; }
  // Called with every unit once it is encoded, for strategies that index frames themselves
  // (external embeddings, mapped to blocks by frame index / time).
  virtual void observe(const VisualUnit& unit) { (void)unit; }
  // A new stream begins: drop what was observed.
  virtual void begin_stream() {}
  // The score each block got for the current question (mean over layers where every layer scores),
  // recorded per question for reports (the temporal bias of retrieval); empty: the strategy does not score.
  virtual std::map<int64_t, double> block_scores() const { return {}; }
  // As EncodingStrategy::add_record_fields: its own fields for the current question's record.
  virtual void add_record_fields(nlohmann::json& extra) const { (void)extra; }
  // A mixture's experts' own scores per block (name -> block -> score), recorded beside
  // block_scores(); empty for strategies with one expert.
  virtual std::map<std::string, std::map<int64_t, double>> expert_block_scores() const { return {}; }
};

}  // namespace svqa
