#include "app/run/question_step.h"

#include <chrono>
#include <cstdlib>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

#include "core/io/environment_error.h"
#include "core/io/format.h"
#include "app/run/context_window.h"
#include "models/loading/torch_error.h"

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

// The 1-minute load average and the CPUs online (0, 0 where the system does not tell).
std::pair<double, int64_t> machine_load() {
  double load[1] = {0};
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  return {getloadavg(load, 1) == 1 ? load[0] : 0.0, cpus > 0 ? static_cast<int64_t>(cpus) : 0};
}

// The prompt after the retrieved context: the benchmark's question text in the answer prompt,
// then the start of the answer the rule pre-fills.
std::string prompt_for(const QuestionStep& step, const Question& q) {
  std::string prompt = step.answer_prompt;
  prompt.replace(prompt.find("{question}"), 10, step.benchmark.question_text(q));
  return prompt + step.benchmark.answer_prefix(q);
}

// The bank the question is answered from: the encoder's own for this question (`own`, built inside the
// window already), else the part of the stream's inside the window (`window`, when there is one), else the stream's.
const MemoryBank& answered_bank(StreamEncoding& stream, const MemoryBank* own,
                                const std::unique_ptr<MemoryBank>& window) {
  return own ? *own : window ? *window : stream.bank();
}

QuestionInfo question_info(const QuestionStep& step, const Question& q) {
  return {q.id, q.text, q.time, q.offline ? 0.0 : window_start(q.time, step.context_window_s), nullptr};
}

// What every record says of its question.
PredictionRecord question_record(const std::string& stream_id, const Question& q) {
  PredictionRecord r;
  r.stream = stream_id;
  r.question_id = q.id;
  if (std::isfinite(q.time)) r.time = q.time;  // an offline question whose video could not be read: unknown
  r.question = q.text;
  r.category = q.category;
  for (const char* key : {"item", "probe"})  // a record asked at several times (OVO-Bench's probes)
    if (const auto tag = q.tags.find(key); tag != q.tags.end()) r.extra[key] = tag->second;
  return r;
}

}  // namespace

int64_t answer_length(int64_t max_new_tokens, const Question& q) {
  if (max_new_tokens > 0) return max_new_tokens;
  if (!q.options.empty()) return 16;
  return q.offline ? 1024 : 256;
}

PredictionRecord error_record(const std::string& stream_id, const Question& q, const std::string& why) {
  PredictionRecord r = question_record(stream_id, q);
  r.error = why;
  return r;
}

PredictionRecord fault_record(const std::string& stream_id, const Question& q, const std::string& why) {
  PredictionRecord r = error_record(stream_id, q, why);
  r.fault = "input";
  return r;
}

namespace {

// The one place the encoder hears of a question before retrieval reads the bank; the bank it built
// for the question, if it builds one.
const MemoryBank* tell_encoder(const QuestionStep& step, StreamEncoding& stream, const Question& q) {
  return step.encoder.prepare_for_question(step.backbone, question_info(step, q), stream.bank());
}

// A question's answer, and what else it took on the way to the first token.
struct Asked {
  Answer answer;
  double told_s = 0;  // what the encoder did when told of the question (StreamKV encodes its open segment)
  double window_s = 0;  // copying the blocks inside the context window: on the way to the first token
  std::unique_ptr<MemoryBank> window;  // those blocks, when the question has a window the encoder did not build
  const MemoryBank* own = nullptr;  // the bank the encoder built for the question, if it builds one
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The encoder told of the question, the bank inside its window, and the answer from them.
Asked ask(const QuestionStep& step, StreamEncoding& stream, const Question& q, const QuestionInfo& info) {
  Asked asked;
  auto t0 = std::chrono::steady_clock::now();
  asked.own = tell_encoder(step, stream, q);
  asked.told_s = seconds_since(t0);
  if (info.window_start > 0 && !asked.own) {
    t0 = std::chrono::steady_clock::now();
    asked.window = blocks_from(stream.bank(), info.window_start,
                               {step.backbone.num_layers(), step.backbone.device(), -1, ""});
    asked.window_s = seconds_since(t0);
  }
  AnswerOptions options = step.options;
  options.max_new_tokens = answer_length(step.options.max_new_tokens, q);
  asked.answer = answer_question(step.backbone, step.encoder, step.traits, answered_bank(stream, asked.own, asked.window),
                                 step.retrieval, info, prompt_for(step, q), options);
  return asked;
}

// Each retrieved block's span, after checking that it ends before its question and starts inside its window.
void add_block_spans(PredictionRecord& r, StreamEncoding& stream, const MemoryBank& bank, const Question& q,
                     const QuestionInfo& info) {
  for (const auto& layer : r.retrieved)
    for (const int64_t id : layer) {
      const auto& b = bank.info(id);
      // An offline question is asked after the whole video: every frame is before it.
      if (!stream.block_before_question(b, q.offline ? std::numeric_limits<double>::infinity() : q.time))
        throw std::logic_error("causality: block " + std::to_string(id) + " ends after its question");
      if (b.start_time < info.window_start)
        throw std::logic_error("context window: block " + std::to_string(id) + " starts before its question's window");
      r.block_spans[id] = {b.start_time, b.end_time};
    }
}

// Retrieval's scores as (block start s, score) in block order, 5 significant digits; a mixture's experts' too.
void add_retrieval_scores(PredictionRecord& r, const Answer& a, const MemoryBank& bank) {
  const auto scored = [&](const std::map<int64_t, double>& scores) {
    std::vector<std::pair<double, double>> out;
    for (const auto& [id, score] : scores) out.emplace_back(bank.info(id).start_time, round_significant(score, 5));
    return out;
  };
  r.retrieval_scores = scored(a.block_scores);
  for (const auto& [expert, scores] : a.expert_block_scores)  // a mixture's experts (rrf_mixture)
    if (!scores.empty()) r.extra["expert_scores"][expert] = scored(scores);
}

// The benchmark's verdict where its rule judges the answer, and the first token's logits when asked for.
void add_verdict(PredictionRecord& r, const QuestionStep& step, const Question& q, const Answer& a) {
  if (judged_by_rule(q)) {
    const Verdict v = step.benchmark.verdict(q, a.text);  // unanswered or no gold: no "correct"
    r.letter = v.parsed;
    if (step.benchmark.has_gold(q) && v.outcome != Verdict::Outcome::unanswered)
      r.correct = v.outcome == Verdict::Outcome::correct;
  }
  if (step.record_logits && a.prompt_logits.defined()) {
    const auto logits = a.prompt_logits.to(at::kCPU, at::kFloat).contiguous();
    r.extra["first_token_logits"] = std::vector<float>(logits.data_ptr<float>(), logits.data_ptr<float>() + logits.numel());
  }
}

}  // namespace

void replay_answered(const QuestionStep& step, StreamEncoding& stream, const Question& q) {
  try {
    tell_encoder(step, stream, q);
  } catch (const EnvironmentError&) {
    throw;
  } catch (const std::exception&) {  // it failed when answered too: its error record is on file
  }
}

PredictionRecord answer_one(const QuestionStep& step, StreamEncoding& stream, const std::string& stream_id,
                            const Question& q, const StreamEncoding::Step& encoding) {
  const QuestionInfo info = question_info(step, q);
  Asked asked;
  try {
    asked = ask(step, stream, q, info);
  } catch (const EnvironmentError&) {  // the machine's failure: no record, the run stops, a rerun retries
    throw;
  } catch (const c10::Error& e) {  // a tensor op of a strategy: one line in the record, not a 20-line backtrace
    return error_record(stream_id, q, torch_error_line(e));
  } catch (const std::exception& e) {
    return error_record(stream_id, q, e.what());
  }

  const Answer& a = asked.answer;
  const MemoryBank& bank = answered_bank(stream, asked.own, asked.window);
  // Context built at the question (fresh_frames' vision and prefill) is on the way to the first token;
  // work the encoder finished then (StreamKV's open segment) is encoding.
  const bool built_at_question = step.traits.memory == MemoryWrites::AtQuestion;
  PredictionRecord r = question_record(stream_id, q);
  r.options = q.options;
  r.reference = q.answer;
  r.output = a.text;
  r.output_ids = a.ids;
  r.retrieved = a.selected;
  add_block_spans(r, stream, bank, q, info);
  r.context_tokens = a.context_tokens;
  r.frames_encoded = stream.encoded();
  if (!q.offline) r.future_s = stream.future_s(q.time);
  r.timing = RecordTiming{encoding.seconds + (built_at_question ? 0 : asked.told_s), encoding.frames,
                          a.retrieve_seconds, a.prefill_seconds, a.decode_seconds,
                          a.retrieve_seconds + a.prefill_seconds + asked.window_s + (built_at_question ? asked.told_s : 0)};
  std::tie(r.timing->load_1m, r.timing->cpus) = machine_load();
  r.memory = record_memory((asked.window ? stream.bank() : bank).accounting());  // what is kept, not the window's copy
  if (step.context_window_s > 0 && !q.offline) r.extra["context_window"] = {info.window_start, q.time};
  add_retrieval_scores(r, a, bank);
  add_verdict(r, step, q, a);
  // Per-record fields of the strategies ("extra").
  step.encoder.add_record_fields(r.extra);
  step.retrieval.add_record_fields(r.extra);
  return r;
}

}  // namespace svqa
