#pragma once
// The prediction record: one JSON object per question in predictions.jsonl. svqa's run writes it
// (core/run) and everything that reads predictions reads it through this type: the resume log, the
// scorer, `svqa score` (other systems' files too) and `svqa report`.
//
// Read from any system (from_json), one object per line:
//   question id   "question_id" or "id" (string or integer)                       required
//   output        "prediction", "response" or "output" (the raw model text)         required unless "error"
//   stream        "stream" (the video / stream id; needed only where ids repeat)    optional
//   error         "error" (svqa: the question failed; counted as errored)           optional
//   retrieval     "retrieved" (block ids per layer, or one flat list) and
//                 "block_spans" ({"id": [start, end]} seconds)                       optional
// svqa's own records also hold the question, its options and reference, the answer's token ids,
// the context size per layer, timing, memory, retrieval scores, the parsed letter and verdict,
// and `extra` (fields the strategies add); to_json writes exactly those.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace svqa {

// Seconds spent on one question; encode_* covers the frames encoded since the previous question.
struct RecordTiming {
  double encode_s = 0;
  int64_t encode_frames = 0;
  double retrieve_s = 0, prefill_s = 0, decode_s = 0;
  double ttft_s = 0;  // retrieve + prefill: the first token is the argmax of the prompt prefill's logits
};

// The memory bank when the question was asked.
struct RecordMemory {
  int64_t blocks = 0, tokens = 0, ram_bytes = 0, disk_bytes = 0, representative_bytes = 0;
  std::map<std::string, std::pair<int64_t, int64_t>> by_granularity;  // name → (tokens, bytes), non-zero only
};

struct PredictionRecord {
  size_t line = 0;  // 1-based line of the file it was read from, for messages; 0: not read
  std::string stream;
  std::string question_id;
  std::optional<double> time;  // seconds into the stream when asked; none: unknown (e.g. an offline question that failed)
  std::string question, category;
  std::vector<std::string> options;  // svqa's records: empty for an open-ended question
  std::string reference;
  std::string output;  // "prediction": the raw model text
  std::string error;   // non-empty: an error record, no output
  std::vector<int64_t> output_ids;  // "prediction_ids"
  std::vector<std::vector<int64_t>> retrieved;  // block ids per layer, in context order
  std::map<int64_t, std::pair<double, double>> block_spans;
  std::vector<int64_t> context_tokens;  // per layer: sinks + retrieved tokens
  int64_t frames_encoded = 0;
  std::optional<RecordTiming> timing;  // svqa's answered records have timing and memory
  std::optional<RecordMemory> memory;
  std::vector<std::pair<double, double>> retrieval_scores;  // (block start s, score) for every block, if scored
  std::optional<std::string> letter;  // multiple choice: what the benchmark's rule read
  std::optional<bool> correct;        // multiple choice with a gold letter, not left unanswered
  nlohmann::json extra = nlohmann::json::object();  // fields the strategies add ("extra"), written when non-empty

  bool answered() const { return error.empty(); }
};

// svqa's record as written to predictions.jsonl: an error record holds stream, question_id, time,
// question, category and error; an answered one every field above that it has.
nlohmann::json to_json(const PredictionRecord& r);
// Throws std::runtime_error "WHERE: field: what was expected" (WHERE: "FILE:LINE" or what the caller gives).
PredictionRecord prediction_from_json(const nlohmann::json& j, const std::string& where);

struct JsonLinesFile;
// The records of a JSON Lines file already read from `path` (for messages "PATH:LINE: field: what").
std::vector<PredictionRecord> prediction_records(const JsonLinesFile& file, const std::string& path);

// Every record of a predictions file, read with the JSON Lines rule of core/io/json_lines.h (a torn
// last line is left out). Throws std::runtime_error "FILE:LINE: field: what was expected" at the first bad line.
std::vector<PredictionRecord> read_prediction_records(const std::string& path);

}  // namespace svqa
