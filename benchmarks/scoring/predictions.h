#pragma once
// A system's answer to one question, as any system's predictions file gives it: what the scorer
// and `svqa score` read. svqa's own record (app/run/prediction_record.h) extends it.
//
// Read from any system (prediction_from_json), one object per line:
//   question id   "question_id" or "id" (string or integer)                       required
//   output        "prediction", "response" or "output" (the raw model text)         required unless "error"
//   stream        "stream" (the video / stream id; needed only where ids repeat)    optional
//   error         "error" (svqa: the question failed; counted as errored)           optional
//   retrieval     "retrieved" (block ids per layer, or one flat list) and
//                 "block_spans" ({"id": [start, end]} seconds)                       optional
//   time          "time" (seconds into the stream of the answer; proactive: the last turn's)   optional
//   dialog        "extra.dialog_history" / "dialog_history" and "extra.answered" / "answered"
//                 (a proactive question's turns, as StreamingBench records them)    optional

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace svqa {

struct Prediction {
  size_t line = 0;  // 1-based line of the file it was read from, for messages; 0: not read
  std::string stream;
  std::string question_id;
  std::string output;  // "prediction": the raw model text
  std::string error;   // non-empty: an error record, no output
  std::vector<std::vector<int64_t>> retrieved;  // block ids per layer, in context order
  std::map<int64_t, std::pair<double, double>> block_spans;
  std::optional<double> time;  // when the answer was given (proactive: count.py's last turn time)
  nlohmann::json dialog_history;  // a proactive question's turns ({role, content, time, cost}); null: none
  nlohmann::json answered_at;     // a proactive question's yes time, or false; null: not proactive

  bool answered() const { return error.empty(); }
};

// Throws std::runtime_error "WHERE: field: what was expected" (WHERE: "FILE:LINE" or what the caller gives).
Prediction prediction_from_json(const nlohmann::json& j, const std::string& where);

// Every prediction of a file, read with the JSON Lines rule of core/io/json_lines.h (a torn last
// line is left out). Throws std::runtime_error "FILE:LINE: field: what was expected" at the first bad line.
std::vector<Prediction> read_predictions(const std::string& path);

}  // namespace svqa
