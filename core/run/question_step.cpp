#include "core/run/question_step.h"

#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/io/format.h"
#include "models/torch_error.h"

namespace svqa {
namespace {

RecordMemory record_memory(const MemoryAccounting& a) {
  RecordMemory m{a.blocks, a.tokens, a.ram_bytes, a.disk_bytes, a.representative_bytes, {}, a.layer_tokens};
  for (int g = 0; g < kGranularities; ++g)
    if (a.tokens_by_granularity[g])
      m.by_granularity[granularity_name(static_cast<Granularity>(g))] = {a.tokens_by_granularity[g],
                                                                          a.bytes_by_granularity[g]};
  return m;
}

// The prompt after the retrieved context: the benchmark's question text in the answer prompt,
// then the start of the answer the rule pre-fills.
std::string prompt_for(const QuestionStep& step, const Question& q) {
  std::string prompt = step.answer_prompt;
  prompt.replace(prompt.find("{question}"), 10, step.benchmark.question_text(q));
  return prompt + step.benchmark.answer_prefix(q);
}

// What every record says of its question.
PredictionRecord question_record(const std::string& stream_id, const Question& q) {
  PredictionRecord r;
  r.stream = stream_id;
  r.question_id = q.id;
  if (std::isfinite(q.time)) r.time = q.time;  // an offline question whose video could not be read: unknown
  r.question = q.text;
  r.category = q.category;
  return r;
}

}  // namespace

PredictionRecord error_record(const std::string& stream_id, const Question& q, const std::string& why) {
  PredictionRecord r = question_record(stream_id, q);
  r.error = why;
  return r;
}

PredictionRecord answer_one(const QuestionStep& step, StreamEncoding& stream, const std::string& stream_id,
                            const Question& q, const StreamEncoding::Step& encoding) {
  MemoryBank& bank = stream.bank();
  const QuestionInfo info{q.id, q.text, q.time};
  Answer a;
  double told_s = 0;  // what the encoder did when told of the question (StreamKV encodes its open segment)
  try {
    // The one place the encoder hears of a question before retrieval reads the bank.
    const auto t0 = std::chrono::steady_clock::now();
    step.encoder.before_question(step.backbone, info, bank);
    told_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    a = answer_question(step.backbone, step.encoder, bank, step.retrieval, info, prompt_for(step, q), step.options);
  } catch (const c10::Error& e) {  // a tensor op of a strategy: one line in the record, not a 20-line backtrace
    return error_record(stream_id, q, torch_error_line(e));
  } catch (const std::exception& e) {
    return error_record(stream_id, q, e.what());
  }

  PredictionRecord r = question_record(stream_id, q);
  r.options = q.options;
  r.reference = q.answer;
  r.output = a.text;
  r.output_ids = a.ids;
  r.retrieved = a.selected;
  for (const auto& layer : a.selected)
    for (const int64_t id : layer) {
      const auto& b = bank.info(id);
      if (b.end_time > q.time) throw std::logic_error("causality: block " + std::to_string(id) + " ends after its question");
      r.block_spans[id] = {b.start_time, b.end_time};
    }
  r.context_tokens = a.context_tokens;
  r.frames_encoded = stream.encoded();
  r.timing = RecordTiming{encoding.seconds + told_s, encoding.frames, a.retrieve_seconds, a.prefill_seconds, a.decode_seconds,
                          a.retrieve_seconds + a.prefill_seconds};
  r.memory = record_memory(bank.accounting());
  // Scores as (block start s, score) in block order, 5 significant digits.
  const auto scored = [&](const std::map<int64_t, double>& scores) {
    std::vector<std::pair<double, double>> out;
    for (const auto& [id, score] : scores) out.emplace_back(bank.info(id).start_time, round_significant(score, 5));
    return out;
  };
  r.retrieval_scores = scored(a.block_scores);
  for (const auto& [expert, scores] : a.expert_block_scores)  // a mixture's experts (rrf_mixture)
    if (!scores.empty()) r.extra["expert_scores"][expert] = scored(scores);
  if (!q.options.empty()) {
    const Verdict v = step.benchmark.verdict(q, a.text);  // unanswered or no gold: no "correct"
    r.letter = v.parsed;
    if (step.benchmark.has_gold(q) && v.outcome != Verdict::Outcome::unanswered)
      r.correct = v.outcome == Verdict::Outcome::correct;
  }
  // Per-record fields of the strategies ("extra").
  step.encoder.add_record_fields(r.extra);
  step.retrieval.add_record_fields(r.extra);
  return r;
}

}  // namespace svqa
