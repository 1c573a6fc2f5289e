#pragma once
// OVO-Bench's results files (inference.py's output, what score.py reads): {"backward": [...],
// "realtime": [...], "forward": [...]}, backward and real-time entries {id, video, task, question,
// response, ground_truth}, forward entries the annotation record with `response` in each probe of
// `test_info`. A response is null where inference failed (the scorer counts it wrong, as "").

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/scoring/predictions.h"
#include "engine/benchmark.h"

namespace svqa {

// True for a JSON object with the three lists.
bool is_ovobench_results(const nlohmann::json& j);

// One prediction record per entry and per probe: question_id = the entry's id, a probe's
// "<id>_<probe index>" (as the ovobench loader names them); output = response ("" for null).
// Throws std::runtime_error "WHERE: [group][i].field: what was expected".
std::vector<Prediction> ovobench_results_records(const nlohmann::json& results, const std::string& where);

// Every results file `path` names: the file, or each *.json of a directory in name order (as score.py
// reads results/MODEL/), their lists concatenated. Throws std::runtime_error naming the file.
nlohmann::json read_ovobench_results(const std::string& path);

}  // namespace svqa
