#pragma once
// `svqa report`: results directories of `svqa run` / `svqa grid` summarised side by side — one
// table of runs × benchmarks × categories (markdown and CSV) and PNG plots. Everything is
// recomputed from each run's predictions.jsonl, so a run still going (or killed) is reported with
// what it has, every question counted once; open-ended judgments come from its scores.json.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/scoring.h"
#include "core/engine/registries.h"

namespace svqa {

// The retrieval score of every block in memory over stream time, for one question.
struct RetrievalTrace {
  std::string stream, question_id;
  double time = 0;                                 // when it was asked
  std::vector<std::pair<double, double>> scores;  // (block start s, score), in stream order
};

struct RunSummary {
  std::string dir;        // the run's results directory
  std::string name;       // its experiment name (grid runs: "<experiment>__key=value...")
  std::string method;     // "<encoding type> + <retrieval type>"
  std::string benchmark;  // registry name
  std::string problem;    // non-empty: the run could not be summarised, and why
  ScoreReport scores;
  std::optional<double> judge_accuracy, judge_score;  // open-ended, from scores.json when judged
  int64_t judge_failed = 0;
  int64_t records = 0, errored = 0;
  // Means over answered questions: K/V tokens held in memory when asked, tokens attended while
  // answering (sinks + retrieved, mean over layers), time to first token (retrieval + prompt
  // prefill: the first token is the argmax of the prefill's logits); frames encoded per second.
  std::optional<double> memory_tokens, inference_tokens, ttft_s, encode_fps;
  std::vector<RetrievalTrace> traces;
};

// Run directories (holding config.yaml and predictions.jsonl) at or below each root, sorted.
// Throws std::runtime_error naming a root that does not exist or holds no run.
std::vector<std::string> find_run_dirs(const std::vector<std::string>& roots);

// Never throws for a broken run: it comes back with `problem` set, and the report lists it.
RunSummary summarize_run(const std::string& dir, const Registries& registries);

// Runs that would show the same name (one experiment run into two results roots) get their
// directory added ("demo (results/a/demo)"), so no two rows or legend entries read alike.
void distinct_names(std::vector<RunSummary>& runs);

std::string report_markdown(const std::vector<RunSummary>& runs);
// Long format: one row per run × benchmark × category ("overall", "M-Avg" rows too).
std::string report_csv(const std::vector<RunSummary>& runs);

// accuracy_vs_memory[_<benchmark>].png, accuracy_vs_inference[_<benchmark>].png and retrieval_scores.png
// in `dir`; returns the paths written.
// `question` ("STREAM/ID") picks the question of the score plot; empty: the latest question of the
// first run that has scores.
std::vector<std::string> write_report_plots(const std::vector<RunSummary>& runs, const std::string& dir,
                                            const std::string& question);

}  // namespace svqa
