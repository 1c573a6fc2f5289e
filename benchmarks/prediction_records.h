#pragma once
// Predictions to score, one JSON object per line (JSON Lines), from svqa or any other system:
//   question id   "question_id" or "id" (string or integer)                       required
//   output        "prediction", "response" or "output" (the raw model text)         required unless "error"
//   stream        "stream" (the video / stream id; needed only where ids repeat)    optional
//   error         "error" (svqa: the question failed; counted as errored)           optional
//   retrieval     "retrieved" (block ids per layer, or one flat list) and
//                 "block_spans" ({"id": [start, end]} seconds)                       optional
// svqa's own predictions.jsonl has all of these.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace svqa {

struct PredictionRecord {
  size_t line = 0;  // 1-based, for messages
  std::string stream;
  std::string question_id;
  std::string output;
  std::string error;  // non-empty: an error record, no output
  std::vector<std::vector<int64_t>> retrieved;
  std::map<int64_t, std::pair<double, double>> block_spans;
};

// Throws std::runtime_error "FILE:LINE: field: what was expected" at the first bad line.
// `skip_torn_tail`: a last line without its newline that does not parse is what a killed writer
// leaves (svqa's predictions.jsonl mid-run): skipped, not an error.
std::vector<PredictionRecord> read_prediction_records(const std::string& path, bool skip_torn_tail = false);

}  // namespace svqa
