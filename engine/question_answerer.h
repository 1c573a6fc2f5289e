#pragma once
// Answers one question from the memory, in ReKV's three passes: a retrieval pass of the raw
// question (each layer selects blocks with that layer's queries; the question's own K/V are then
// dropped; a strategy that chose once in begin_question skips it), a prefill of the answer prompt
// over [sinks | selected blocks], greedy decoding. A strategy that does not retrieve
// (RetrievalStrategy::retrieves() false) skips the first pass: each layer's stored blocks are the context.

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/memory/context_assembler.h"
#include "core/memory/memory_bank.h"
#include "engine/memory_contract.h"
#include "engine/strategy.h"

namespace svqa {

class Backbone;

struct AnswerOptions {
  std::optional<PositionPolicy> policy;  // none: the encoder's own (EncoderTraits::position_policy)
  int64_t max_new_tokens = 16;
};

struct Answer {
  std::vector<int64_t> ids;
  std::string text;
  std::vector<std::vector<int64_t>> selected;  // block ids per layer, in context order
  PositionPolicy policy = PositionPolicy::Contiguous;  // the one used
  std::vector<int64_t> context_tokens;         // per layer: sinks + selected tokens
  std::map<int64_t, double> block_scores;      // the retrieval strategy's score per block, if it scores
  std::map<std::string, std::map<int64_t, double>> expert_block_scores;  // per expert of a mixture
  at::Tensor prompt_logits;                    // [vocab] float32 after the prompt prefill
  double retrieve_seconds = 0, prefill_seconds = 0, decode_seconds = 0;
  double gather_seconds = 0;  // part of retrieve_seconds: fetching the selected blocks and assembling the context
};

// `prompt` is the full answer prompt text (question, options, chat tokens) placed after the
// retrieved context; `question.text` is what the retrieval pass runs. `traits`: what the encoder's
// registration declares (engine/registries.h's encoder_traits): its position policy, whether its
// blocks tile the stream, its answer window.
Answer answer_question(Backbone& backbone, const EncodingStrategy& encoder, const EncoderTraits& traits,
                       const MemoryBank& bank, RetrievalStrategy& retrieval, const QuestionInfo& question,
                       const std::string& prompt, const AnswerOptions& options);

}  // namespace svqa
