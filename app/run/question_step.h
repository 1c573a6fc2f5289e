#pragma once
// Answering one question: the prompt by the benchmark's rule, the encoder told that a question is
// coming, the engine's three passes over the stream's bank, and everything recorded about it.

#include <string>

#include "app/run/prediction_record.h"
#include "engine/benchmark.h"
#include "engine/memory_contract.h"
#include "engine/question_answerer.h"
#include "engine/strategy.h"
#include "app/run/stream_encoding.h"

namespace svqa {

// What stays the same for every question of a run.
struct QuestionStep {
  Backbone& backbone;
  EncodingStrategy& encoder;
  EncoderTraits traits;  // what the encoder's registration declares (engine/registries.h)
  RetrievalStrategy& retrieval;
  const Benchmark& benchmark;
  std::string answer_prompt;  // the text after the retrieved video, with {question}
  AnswerOptions options;      // max_new_tokens 0: by question kind (answer_length)
  bool record_logits = false;  // extra.first_token_logits
  double context_window_s = 0;  // stream.context_window_s: 0 the whole past (app/run/context_window.h)
};

// Greedy decoding limit for `q`: `max_new_tokens` when > 0, else ReKV's by question kind
// (video_qa/rekv_offline_vqa.py, rekv_stream_vqa.py): 16 multiple choice, 1024 offline open-ended,
// 256 streaming open-ended.
int64_t answer_length(int64_t max_new_tokens, const Question& q);

// Answers `q` (asked at q.time; every frame up to it is encoded) from `stream`'s bank. `encoding`
// is what was encoded for it since the previous question. A failure of the question becomes an
// error record; under a context window the question is answered from the blocks inside it, and one
// retrieved from before the window throws std::logic_error too; an EnvironmentError (spill disk full, a spill file changed) is thrown on, so the run
// stops and a rerun retries; a retrieved block that ends after the question throws std::logic_error (a bug).
PredictionRecord answer_one(const QuestionStep& step, StreamEncoding& stream, const std::string& stream_id,
                            const Question& q, const StreamEncoding::Step& encoding);

// A question answered by an earlier run (skipped on resume) changes the stream's memory as it did
// then: the encoder hears of it (StreamKV closes its open segment, MuKV drops leftovers), so later
// answers equal an uninterrupted run's. Its failure then is on file already; an EnvironmentError is thrown on.
void replay_answered(const QuestionStep& step, StreamEncoding& stream, const Question& q);

// The record of a question that could not be answered, and why.
PredictionRecord error_record(const std::string& stream_id, const Question& q, const std::string& why);
// The record of a question whose input could not be read (PredictionRecord::fault "input"): not final.
PredictionRecord fault_record(const std::string& stream_id, const Question& q, const std::string& why);

}  // namespace svqa
