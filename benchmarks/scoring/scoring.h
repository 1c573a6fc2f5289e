#pragma once
// Official accuracy tables from predictions: overall, per category (LVBench: a question counts in
// each of its categories), MLVU's M-Avg (mean of the task accuracies), and the retrieval recall of
// evidence windows. Each output is judged by the benchmark's AnswerRule (benchmarks/datasets/answer_parsing.h).

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/scoring/llm_judge.h"
#include "benchmarks/scoring/ovobench_score.h"
#include "benchmarks/scoring/predictions.h"
#include "engine/benchmark.h"

namespace svqa {

// Multiple-choice questions of one row. Accuracy = correct / (correct + wrong): the rules that
// can leave an output unanswered (StreamingBench, CG-Bench, Video-MME) leave it out, and
// questions without a prediction, with an error record or without a gold answer are left out too.
struct Tally {
  int64_t questions = 0, correct = 0, wrong = 0, unanswered = 0, missing = 0, errored = 0, no_gold = 0;
  int64_t scored() const { return correct + wrong; }
  std::optional<double> accuracy() const;
};

// Questions with evidence whose prediction has retrieval records; a hit: some block retrieved at
// any layer (the union over layers) overlaps an evidence interval. A block's span is its first and
// last frame's time (KvBlock), so both are closed: [s, e] overlaps [a, b] when s <= b and e >= a.
struct RecallTally {
  int64_t with_evidence = 0, with_retrieval = 0, hits = 0;
  std::optional<double> recall() const;
};

// Open-ended questions judged by the LLM judge (benchmarks/scoring/llm_judge.h), as the reference script
// aggregates them: accuracy = yes / (yes + no); score = the mean of int(score) over the judged
// replies that have one. Failed questions (no readable reply after every try) are in neither.
struct JudgeTally {
  std::string model;
  int64_t yes = 0, no = 0, neither = 0, failed = 0, from_cache = 0;
  int64_t no_reference = 0;  // answered, but the question has no reference answer: not judged
  int64_t score_sum = 0, score_count = 0;
  int64_t judged() const { return yes + no + neither; }
  std::optional<double> accuracy() const;
  std::optional<double> mean_score() const;
};

// StreamingBench's Proactive Output as count.py counts it, over the questions with an answer:
// time accuracy = time_correct / scored, answer accuracy = answer_correct / scored (the table's
// accuracy; benchmarks/datasets/streamingbench_proactive.h has the rule).
struct ProactiveTally {
  int64_t scored = 0, time_correct = 0, answer_correct = 0;
};

struct QuestionScore {
  std::string stream, id, category;
  std::string outcome;  // correct, wrong, unanswered, missing, errored, no_gold, open_ended
  std::string parsed;   // what the rule read from the output
  std::optional<bool> evidence_hit;
  std::optional<Judgment> judgment;  // open-ended questions with an output, once judged
};

struct ScoreReport {
  std::string benchmark;
  AnswerRule rule = AnswerRule::rekv;
  Tally overall;
  std::vector<std::pair<std::string, Tally>> categories;  // the official table's order, then by name
  std::optional<double> macro_accuracy;                    // MLVU: M-Avg
  std::optional<OvoBenchSummary> ovobench;                 // the ovobench rule: tasks, groups, total
  std::optional<ProactiveTally> proactive;                 // StreamingBench Proactive Output questions
  int64_t open_ended = 0, open_ended_answered = 0;         // need the LLM judge (RVS)
  std::optional<JudgeTally> judge;                         // set by judge_open_ended
  RecallTally recall;
  int64_t unmatched_predictions = 0, duplicate_predictions = 0;
  std::vector<QuestionScore> questions;
};

// `benchmark` is the registry name (it picks the table's row order, abbreviations and M-Avg).
// Throws std::runtime_error when a prediction's question id is ambiguous (in several streams, no "stream").
ScoreReport score_predictions(const std::string& benchmark, AnswerRule rule, const std::vector<Stream>& streams,
                              const std::vector<Prediction>& predictions);

// Judges every answered open-ended question of `report` (outcome "open_ended") with `judge`, sets
// its QuestionScore::judgment and report.judge. `progress` (may be null) gets a line per failure
// and a count now and then. Throws std::runtime_error as score_predictions does.
void judge_open_ended(ScoreReport& report, const std::vector<Stream>& streams,
                      const std::vector<Prediction>& predictions, LlmJudge& judge, std::ostream* progress);

std::string score_markdown(const ScoreReport& report);  // the table and the counts beside it
std::string score_json(const ScoreReport& report);      // everything, per question too (indented JSON)

}  // namespace svqa
