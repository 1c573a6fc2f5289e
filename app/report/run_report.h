#pragma once
// `svqa report`: results directories of `svqa run` / `svqa grid` summarised side by side. Each run
// is recomputed from its predictions.jsonl, so a run still going (or killed) is reported with what
// it has, every question counted once; open-ended judgments come from its scores.json. The tables
// (app/report/report_tables.h) and figures (app/report/report_figures.h) are drawn from these.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/scoring/scoring.h"
#include "core/config/expected_result.h"
#include "engine/registries.h"

namespace svqa {

// A timing one can quote: the median of a run's measurements with their range.
struct Spread {
  double median = 0, min = 0, max = 0;
  int64_t n = 0;
};
// Empty: no measurements.
std::optional<Spread> spread_of(std::vector<double> values);

// The retrieval score of every block in memory over stream time, for one question.
struct RetrievalTrace {
  std::string stream, question_id;
  double time = 0;                                 // when it was asked
  std::vector<std::pair<double, double>> scores;  // (block start s, score), in stream order
};

// Answered records whose frames were presented after their question (future_s > 0): causality broken.
struct FramesAfterQuestion {
  int64_t records = 0, answered = 0;  // such records, of the answered ones
  double max_s = 0;                   // the largest future_s
  std::string first;                  // the first such record: "STREAM/ID at T s"
};

struct RunSummary {
  std::string dir;        // the run's results directory
  std::string name;       // its experiment name (grid runs: "<experiment>__key=value...")
  std::string label;      // its display name: the experiment's `label:`, else `method`
  std::string method;     // "<encoding type> + <retrieval type>"
  std::string benchmark;  // registry name
  std::string backbone;   // the backbone's export folder name (else its type), for figure captions
  std::string budget;     // the options that bound what it retrieves or holds ("retrieve_size=8"), if set
  std::string problem;    // non-empty: the run could not be summarised, and why
  // Grid runs: the settings that tell it from the grid's other runs, in the grid's axis order (the
  // `label` axis left out), and its position in the grid (from the grid's grid.json).
  std::vector<std::pair<std::string, std::string>> settings;
  size_t grid_position = std::numeric_limits<size_t>::max();
  ScoreReport scores;
  std::optional<double> judge_accuracy, judge_score;  // open-ended, from scores.json when judged
  int64_t judge_failed = 0;
  int64_t records = 0, errored = 0;
  // Means over answered questions: K/V tokens held in memory when asked, tokens attended while
  // answering (sinks + retrieved, mean over layers); bank bytes (RAM + disk) per hour of stream.
  std::optional<double> memory_tokens, inference_tokens, memory_gb_per_hour;
  // Per answered question, warm-up left out (the first question of each stream, when it has more):
  // time to first token (retrieval + prompt prefill), and frames encoded per second since the
  // previous question.
  std::optional<Spread> ttft_s, encode_fps;
  // The machine while it ran: the highest 1-minute load average any question saw, and its CPUs.
  // Busy: the load exceeded the CPUs (other processes competed for them), so timings are slow.
  double max_load = 0;
  int64_t cpus = 0;
  bool busy() const { return cpus > 0 && max_load > static_cast<double>(cpus); }
  // (question time s, TTFT s), every answered question but the warm-up ones, as ttft_s.
  std::vector<std::pair<double, double>> ttft_by_time;
  // How far back each retrieved block lies: (question time − block end) / question time, 0 = just
  // before the question, 1 = the stream's start; one value per block per layer.
  std::vector<double> retrieved_age;
  std::vector<RetrievalTrace> traces;
  FramesAfterQuestion frames_after_question;  // app/report/causality_check.h
  std::optional<ExpectedResult> expected;  // the paper's figure for this setting (`expected:`), when given
};

// Run directories (holding config.yaml and predictions.jsonl) at or below each root, sorted.
// Throws std::runtime_error naming a root that does not exist or holds no run.
std::vector<std::string> find_run_dirs(const std::vector<std::string>& roots);

// Never throws for a broken run: it comes back with `problem` set, and the report lists it.
RunSummary summarize_run(const std::string& dir, const Registries& registries);

// Rows in the order the grid declares its runs (each grid's runs together), then runs outside a
// grid by name, numbers in names compared as numbers ("n_local=60" before "n_local=120").
void order_runs(std::vector<RunSummary>& runs);
bool natural_less(const std::string& a, const std::string& b);

// Runs that would show the same name (one experiment run into two results roots) get their
// directory added ("demo (results/a/demo)"), so no two rows read alike; likewise runs whose label
// and settings both match get their name (else their directory) added to the label.
void distinct_names(std::vector<RunSummary>& runs);

// A grid run's settings ("retrieval=internal, retrieve_size=4"), the part that tells runs apart.
std::string settings_text(const RunSummary& r);

}  // namespace svqa
