#pragma once
// svqa's predictions written as a benchmark's own results file, so the official scripts score them
// and they can be submitted:
// - OVO-Bench: inference.py's {"backward": [...], "realtime": [...], "forward": [...]}: backward and
//   real-time entries {id, video, task, question, response, ground_truth}, forward records as in the
//   annotation file with `response` in each probe (what score.py reads);
// - StreamingBench (real-time, SQA): the annotation file itself with each question's response under
//   the model's key, as src/eval.py leaves it (what src/data/count.py reads).
// Question ids are the loaders' (benchmarks/datasets/ovobench.h, benchmarks/datasets/streamingbench.h).

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "benchmarks/scoring/predictions.h"

namespace svqa {

struct ExportCounts {
  int64_t written = 0;  // responses written
  int64_t missing = 0;  // questions without a prediction: left out (OVO-Bench) or without the key
  int64_t errored = 0;  // error records: null (OVO-Bench; the official scorer counts it wrong) or left out
  // Questions with several predictions (a resumed or merged run's repeats): the last is exported;
  // `conflicting` of them have predictions that differ (answer, or answer vs error).
  int64_t duplicates = 0, conflicting = 0;
};

// Predictions by question id (the last of several counts, as svqa score); counts the repeats.
std::map<std::string, const Prediction*> predictions_by_id(const std::vector<Prediction>& records, ExportCounts& counts);

// `annotations`: ovo_bench_new.json as read. A record without any prediction is left out; a probe
// without one, inside a record that has some, gets response null.
nlohmann::json ovobench_results_file(const nlohmann::json& annotations,
                                     const std::map<std::string, const Prediction*>& by_id, ExportCounts& counts);

// `annotations`: questions_real.json, questions_real_stream.json or questions_sqa.json as read;
// each answered question gets `model_key`: its response (count.py reads the first character).
nlohmann::json streamingbench_results_file(const nlohmann::json& annotations,
                                           const std::map<std::string, const Prediction*>& by_id,
                                           const std::string& model_key, ExportCounts& counts);

}  // namespace svqa
