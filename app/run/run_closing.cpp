#include "app/run/run_closing.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "benchmarks/scoring/scoring.h"
#include "core/io/atomic_file.h"
#include "core/io/format.h"
#include "core/io/unicode_text.h"

namespace svqa {

RunJudge make_run_judge(const JudgeOptions& options, const std::vector<Stream>& streams, const std::string& dir) {
  const bool open_ended = std::any_of(streams.begin(), streams.end(), [](const Stream& s) {
    return std::any_of(s.questions.begin(), s.questions.end(), [](const Question& q) { return !judged_by_rule(q); });
  });
  RunJudge judge;
  if (!open_ended || LlmJudge::resolved_base_url(options).empty()) return judge;
  JudgeOptions resolved = options;
  if (resolved.cache.empty()) resolved.cache = (std::filesystem::path(dir).parent_path() / "judge_cache.jsonl").string();
  judge.llm = std::make_unique<LlmJudge>(resolved);
  judge.cache = resolved.cache;
  return judge;
}

std::vector<PredictionRecord> asked_records(const std::vector<Stream>& streams, std::vector<PredictionRecord> records,
                                            std::vector<std::string>& left_out) {
  std::set<std::pair<std::string, std::string>> asked;
  for (const auto& s : streams)
    for (const auto& q : s.questions) asked.insert({s.id, q.id});
  std::vector<PredictionRecord> out;
  for (auto& r : records) {
    if (asked.count({r.stream, r.question_id}))
      out.push_back(std::move(r));
    else
      left_out.push_back(r.stream + "/" + r.question_id);
  }
  return out;
}

void log_left_out(const std::vector<std::string>& left_out, std::ostream& log) {
  if (left_out.empty()) return;
  log << left_out.size() << " records of questions the benchmark does not ask left out (first: " << left_out.front()
      << "): their annotations changed since they were answered\n";
}

void write_metrics(const std::string& dir, const std::string& experiment, const RunTotals& totals,
                   const std::vector<PredictionRecord>& records) {
  int64_t answered = 0, errored = 0, scored = 0, correct = 0;
  double retrieve = 0, prefill = 0, decode = 0;
  for (const auto& r : records) {
    if (!r.answered()) {
      ++errored;
      continue;
    }
    ++answered;
    const RecordTiming t = r.timing.value_or(RecordTiming{});
    retrieve += t.retrieve_s, prefill += t.prefill_s, decode += t.decode_s;
    if (r.correct) ++scored, correct += *r.correct;
  }
  auto mean = [&](double sum) { return answered ? sum / static_cast<double>(answered) : 0.0; };
  const nlohmann::json metrics = {
      {"experiment", experiment},
      {"questions", totals.questions},
      {"answered", answered},
      {"errored", errored},
      {"accuracy", scored ? nlohmann::json(double(correct) / double(scored)) : nlohmann::json(nullptr)},
      {"scored", scored},
      {"mean_seconds", {{"retrieve", mean(retrieve)}, {"prefill", mean(prefill)}, {"decode", mean(decode)}}},
      {"encode_fps_this_run",
       totals.encode_seconds > 0 ? static_cast<double>(totals.encoded_frames) / totals.encode_seconds : 0.0}};
  write_file_atomically(dir + "/metrics.json", metrics.dump(2) + "\n");
}

void write_scores(const std::string& dir, const std::string& benchmark_type, const Benchmark& benchmark,
                  const std::vector<Stream>& streams, const std::vector<PredictionRecord>& records, RunJudge& judge,
                  std::ostream& log) {
  const std::vector<Prediction> predictions = scored_predictions(records);
  ScoreReport scores = score_predictions(benchmark_type, benchmark.answer_rule(), streams, predictions);
  if (judge.llm && scores.open_ended_answered) {
    log << fmt::format("judging {} open-ended answers with {} at {} ({} cached in {})\n", scores.open_ended_answered,
                       judge.llm->model(), judge.llm->endpoint(), judge.llm->cached_judgments(), judge.cache);
    judge_open_ended(scores, streams, predictions, *judge.llm, &log);
  }
  write_file_atomically(dir + "/scores.json", score_json(scores));
  if (scores.judge)
    log << fmt::format("judge {}: accuracy {:.1f} %, score {:.2f} ({} failed: rerun to retry them)\n", scores.judge->model,
                       scores.judge->accuracy().value_or(0) * 100, scores.judge->mean_score().value_or(0),
                       scores.judge->failed);
}

void print_run_table(const std::vector<PredictionRecord>& records, std::ostream& log) {
  log << fmt::format("\n{:<22}{:<8}{:<24}{:<30}{:<26}memory\n", "question", "time", "answer", "retrieved (layer 0, s)",
                     "enc/ret/pre/dec s");
  for (const auto& r : records) {
    const std::string id = r.stream + "/" + r.question_id;
    log << fmt::format("{:<22}{:<8}", utf8_prefix(id, 21), r.time ? fmt::format("{:.1f}", *r.time) : std::string("end"));
    if (!r.answered()) {
      log << "error: " << r.error << "\n";
      continue;
    }
    std::string times;
    if (!r.retrieved.empty())
      for (const int64_t block : r.retrieved[0]) {
        const auto span = r.block_spans.find(block);
        times += (times.empty() ? "" : ",") + fmt::format("{:.0f}", span == r.block_spans.end() ? 0.0 : span->second.first);
      }
    if (times.size() > 28) times = times.substr(0, 25) + "...";
    const RecordTiming t = r.timing.value_or(RecordTiming{});
    const RecordMemory m = r.memory.value_or(RecordMemory{});
    log << fmt::format("{:<24}{:<30}{:<26}{} tok, {:.1f} MiB RAM, {:.1f} MiB disk\n",
                       utf8_prefix(nlohmann::json(r.output).dump(), 23), times,
                       fmt::format("{:.2f}/{:.2f}/{:.2f}/{:.2f}", t.encode_s, t.retrieve_s, t.prefill_s, t.decode_s),
                       m.tokens, static_cast<double>(m.ram_bytes) / 1048576.0,
                       static_cast<double>(m.disk_bytes) / 1048576.0);
  }
}

}  // namespace svqa
