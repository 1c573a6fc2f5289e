#pragma once
// The two plugin interfaces. A strategy is one folder in strategies/encoding/ or strategies/retrieval/,
// registered in that folder's register_builtin.cpp with a typed options struct and what it declares
// (engine/memory_contract.h: an encoder's EncoderProvides and EncoderTraits, a retrieval's RetrievalNeeds).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/memory/context_assembler.h"
#include "core/memory/memory_bank.h"
#include "engine/stream_types.h"

namespace svqa {

class Backbone;

// Frames → blocks in the bank. Owns its working state (sinks, local window) for the current stream.
// Its operations only: what it does to memory (appends or rewrites blocks, builds the memory at the
// question, reads visual tokens) and how it is answered from (position policy, answer window) are
// its EncoderTraits, declared with its registration (engine/memory_contract.h), from which the run
// and validation derive snapshots, the codec and retrieval. A new virtual here is forwarded in
// EncoderWrapper below, the one place that forwards.
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
  // A question is about to be answered (every frame up to its time is encoded): the last chance to
  // change the bank before retrieval (StreamKV encodes its open segment). Returns the bank the
  // question is answered from when the encoder builds one for it (EncoderTraits's AtQuestion:
  // fresh_frames' N frames prefilled afresh; the time this call took is then part of the question's
  // time to first token), valid until the next call; nullptr: the stream's.
  virtual const MemoryBank* prepare_for_question(Backbone& backbone, const QuestionInfo& question, MemoryBank& bank) {
    (void)backbone, (void)question, (void)bank;
    return nullptr;
  }
  // Fields of its own for the question's record, written under "extra" in predictions.jsonl
  // (key them by the strategy's name). Called after the question is answered.
  virtual void add_record_fields(nlohmann::json& extra) const { (void)extra; }
};

// An encoding strategy that runs another one (owned, or not): every call goes to `inner`. A wrapper
// (ReducingEncoder, engine/snapshot's recorder) derives from it and overrides only the calls it changes.
class EncoderWrapper : public EncodingStrategy {
 public:
  explicit EncoderWrapper(EncodingStrategy& inner) : inner_(inner) {}
  explicit EncoderWrapper(std::unique_ptr<EncodingStrategy> owned) : owned_(std::move(owned)), inner_(*owned_) {}

  void begin_stream(Backbone& backbone, const std::vector<int64_t>& sink_ids, MemoryBank& bank) override {
    inner_.begin_stream(backbone, sink_ids, bank);
  }
  void encode(Backbone& backbone, const std::vector<VisualUnit>& units, MemoryBank& bank) override {
    inner_.encode(backbone, units, bank);
  }
  const SinkKv& sinks() const override { return inner_.sinks(); }
  int64_t next_position() const override { return inner_.next_position(); }
  const MemoryBank* prepare_for_question(Backbone& backbone, const QuestionInfo& question, MemoryBank& bank) override {
    return inner_.prepare_for_question(backbone, question, bank);
  }
  void add_record_fields(nlohmann::json& extra) const override { inner_.add_record_fields(extra); }

  EncodingStrategy& inner() const { return inner_; }

 private:
  std::unique_ptr<EncodingStrategy> owned_;  // before inner_: built first
  EncodingStrategy& inner_;
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
