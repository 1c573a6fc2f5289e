#pragma once
// svqa's prediction record: one JSON object per question in predictions.jsonl, written by the run
// (app/run) and read back by the resume log and `svqa report`. It extends what any system's file
// gives (Prediction, benchmarks/scoring/predictions.h: what the scorer reads) with the question, its
// options and reference, the answer's token ids, the context size per layer, timing, memory,
// retrieval scores, the parsed letter and verdict, and `extra` (fields the strategies add).
//
// Each struct's fields are declared once, in its `fields` list: the JSON key, the member and when
// it is written. Writing (to_json) and reading (record_from_json) both follow that list, so adding
// a field touches one line.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/scoring/predictions.h"

namespace svqa {

// When a field is written. An error record holds the `always` fields, the error and each
// `error_if_set` field that has a value; an answered one the `always` and `answer` fields, and each
// `if_set` field that has a value (an optional that is set, a list or object that is not empty).
// Nested structs write all their fields.
enum class Written { always, error, error_if_set, answer, if_set };

// Seconds spent on one question; encode_* covers the frames encoded since the previous question.
struct RecordTiming {
  double encode_s = 0;
  int64_t encode_frames = 0;
  double retrieve_s = 0, prefill_s = 0, decode_s = 0;
  double ttft_s = 0;  // retrieve + prefill: the first token is the argmax of the prompt prefill's logits
  // The machine when the question was answered: its 1-minute load average and CPUs (0: unknown).
  // A load above the CPUs means other processes competed for them: `svqa report` flags such timings.
  double load_1m = 0;
  int64_t cpus = 0;

  template <class Self, class Visit>
  static void fields(Self& t, Visit&& v) {
    v("encode_s", t.encode_s, Written::always);
    v("encode_frames", t.encode_frames, Written::always);
    v("retrieve_s", t.retrieve_s, Written::always);
    v("prefill_s", t.prefill_s, Written::always);
    v("decode_s", t.decode_s, Written::always);
    v("ttft_s", t.ttft_s, Written::always);
    v("load_1m", t.load_1m, Written::always);
    v("cpus", t.cpus, Written::always);
  }
};

// Tokens and bytes of one granularity (frame, patch, segment, summary) in the bank.
struct GranularityMemory {
  int64_t tokens = 0, bytes = 0;

  template <class Self, class Visit>
  static void fields(Self& g, Visit&& v) {
    v("tokens", g.tokens, Written::always);
    v("bytes", g.bytes, Written::always);
  }
};

// The memory bank when the question was asked.
struct RecordMemory {
  int64_t blocks = 0, tokens = 0, ram_bytes = 0, disk_bytes = 0, representative_bytes = 0;
  std::map<std::string, GranularityMemory> by_granularity;  // non-zero granularities only
  int64_t layer_tokens = 0;  // tokens summed over the layers storing them (StreamKV stores some blocks in some layers)

  template <class Self, class Visit>
  static void fields(Self& m, Visit&& v) {
    v("blocks", m.blocks, Written::always);
    v("tokens", m.tokens, Written::always);
    v("ram_bytes", m.ram_bytes, Written::always);
    v("disk_bytes", m.disk_bytes, Written::always);
    v("representative_bytes", m.representative_bytes, Written::always);
    v("layer_tokens", m.layer_tokens, Written::always);
    v("by_granularity", m.by_granularity, Written::always);
  }
};

struct PredictionRecord : Prediction {
  // Prediction::time: seconds into the stream when asked (a proactive question: its last turn); none:
  // unknown (e.g. an offline question that failed).
  std::string question, category;
  std::vector<std::string> options;  // empty for an open-ended question
  std::string reference;
  std::vector<int64_t> output_ids;  // "prediction_ids"
  std::vector<int64_t> context_tokens;  // per layer: sinks + retrieved tokens
  int64_t frames_encoded = 0;
  // How far past the question's time the frames encoded by then were presented (PTS): 0 under
  // stream.frame_times presented; under stride, what ReKV's index stamps let through.
  double future_s = 0;
  std::optional<RecordTiming> timing;  // answered records have timing and memory
  std::optional<RecordMemory> memory;
  std::vector<std::pair<double, double>> retrieval_scores;  // (block start s, score) for every block, if scored
  std::optional<std::string> letter;  // multiple choice: what the benchmark's rule read
  std::optional<bool> correct;        // multiple choice with a gold letter, not left unanswered
  nlohmann::json extra = nlohmann::json::object();  // fields the strategies add, keyed by the strategy's name
  // Set on an error record when the question was not answered because of a fault of its input, not
  // of the method ("input": the video could not be opened). A fault is not final: the next run takes
  // the record out of the file and asks the question again (app/run/prediction_log.h).
  std::optional<std::string> fault;
  bool faulted() const { return fault.has_value(); }

  // Every field of the record, Prediction's included, in the order written.
  template <class Self, class Visit>
  static void fields(Self& r, Visit&& v) {
    v("stream", r.stream, Written::always);
    v("question_id", r.question_id, Written::always);
    v("time", r.time, Written::always);  // null when unknown
    v("question", r.question, Written::always);
    v("category", r.category, Written::always);
    v("error", r.error, Written::error);
    v("fault", r.fault, Written::error_if_set);
    v("options", r.options, Written::answer);
    v("reference", r.reference, Written::answer);
    v("prediction", r.output, Written::answer);
    v("prediction_ids", r.output_ids, Written::answer);
    v("retrieved", r.retrieved, Written::answer);
    v("block_spans", r.block_spans, Written::answer);
    v("context_tokens", r.context_tokens, Written::answer);
    v("frames_encoded", r.frames_encoded, Written::answer);
    v("future_s", r.future_s, Written::answer);
    v("timing", r.timing, Written::if_set);
    v("memory", r.memory, Written::if_set);
    v("retrieval_scores", r.retrieval_scores, Written::if_set);
    v("letter", r.letter, Written::if_set);
    v("correct", r.correct, Written::if_set);
    v("extra", r.extra, Written::if_set);
  }
};

// svqa's record as written to predictions.jsonl (see Written).
nlohmann::json to_json(const PredictionRecord& r);
// Reads what to_json wrote: every field of the list that is present must have its type (a field
// missing takes its default, so files from before a field was added still read); "question_id",
// and "prediction" on an answered record, are required. Throws std::runtime_error
// "WHERE: field: what was expected" (WHERE: "FILE:LINE" or what the caller gives).
PredictionRecord record_from_json(const nlohmann::json& j, const std::string& where);

struct JsonLinesFile;
// The records of a JSON Lines file already read from `path` (for messages "PATH:LINE: field: what").
std::vector<PredictionRecord> prediction_records(const JsonLinesFile& file, const std::string& path);

// Every record of svqa's predictions file, read with the JSON Lines rule of core/io/json_lines.h
// (a torn last line is left out). Throws std::runtime_error "FILE:LINE: field: what was expected".
std::vector<PredictionRecord> read_prediction_records(const std::string& path);

// The records as the scorer reads them.
std::vector<Prediction> scored_predictions(const std::vector<PredictionRecord>& records);

}  // namespace svqa
