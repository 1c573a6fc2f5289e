#pragma once
// Closing a run: metrics.json and scores.json from every record of the run (earlier processes'
// included), open-ended answers judged, and the table of questions printed.

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "benchmarks/scoring/llm_judge.h"
#include "app/run/prediction_record.h"
#include "core/config/experiment.h"
#include "engine/benchmark.h"

namespace svqa {

// The judge of open-ended answers; no llm: nothing to judge, or no judge configured.
struct RunJudge {
  std::unique_ptr<LlmJudge> llm;
  std::string cache;  // its cache file
};
// Made before the run starts, so a bad judge config fails before hours of encoding. The cache
// defaults to judge_cache.jsonl beside `dir`, shared by a grid's runs so none is judged twice.
RunJudge make_run_judge(const JudgeOptions& options, const std::vector<Stream>& streams, const std::string& dir);

// What this process did, for the rates in metrics.json.
struct RunTotals {
  int64_t questions = 0;
  double encode_seconds = 0;
  int64_t encoded_frames = 0;
};

// The records of questions `streams` ask, in the order given. A record of a question they do not
// ask (its annotation edited or removed since it was answered) is left out, so a run never counts
// more answers than questions; its "stream/question" goes to `left_out`.
std::vector<PredictionRecord> asked_records(const std::vector<Stream>& streams, std::vector<PredictionRecord> records,
                                            std::vector<std::string>& left_out);

// "N records of questions the benchmark does not ask left out (first: s/q)" to `log`, if any.
void log_left_out(const std::vector<std::string>& left_out, std::ostream& log);

// DIR/metrics.json (atomically): counts, accuracy of the recorded verdicts, mean seconds per pass.
void write_metrics(const std::string& dir, const std::string& experiment, const RunTotals& totals,
                   const std::vector<PredictionRecord>& records);

// DIR/scores.json (atomically): the benchmark's official table; open-ended answers judged when
// `judge` has an llm. Judge progress and result go to `log`.
void write_scores(const std::string& dir, const std::string& benchmark_type, const Benchmark& benchmark,
                  const std::vector<Stream>& streams, const std::vector<PredictionRecord>& records, RunJudge& judge,
                  std::ostream& log);

// One row per question: id, time, answer, retrieved block starts (layer 0), seconds per pass, memory.
void print_run_table(const std::vector<PredictionRecord>& records, std::ostream& log);

}  // namespace svqa
