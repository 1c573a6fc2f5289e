#pragma once
// Runs an experiment: for each stream, encodes frames only up to each question's time, answers it
// from memory, records the answer, what was retrieved, time and memory; then goes on encoding.

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>

#include "core/config/experiment.h"
#include "engine/registries.h"

namespace svqa {

// A part of a run's streams (a stream shard, app/run/shard/): the streams it takes, by their
// index in the benchmark's order, and the file its records go to (resumed as predictions.jsonl
// is). A part does not close the run: the merge of every part writes metrics.json and scores.json.
struct RunPart {
  std::function<bool(size_t)> takes_stream;
  std::string records;  // path
};

// How a run's questions ended, beside the answers.
struct RunOutcome {
  int errors = 0;  // recorded errors: final, as answers are
  // Questions whose input could not be read (the video missing or unreadable): fault records, taken
  // out and asked again by the next run. A run with faults is not closed.
  int faults = 0;
  std::string first_fault;  // "stream: why"
};

// Writes DIR/predictions.jsonl (appended per question; a rerun resumes) and DIR/metrics.json
// and DIR/scores.json (atomically, at the end: the benchmark's official table, open-ended answers
// judged when a judge is configured; not when a question faulted). Progress and the final table go
// to `log`; with `live_progress` (a terminal) a bar is redrawn while a stream is encoded, else
// timestamped progress lines are written at a bounded rate (app/run/progress.h).
// With `part`: only its streams, into its records file, and no closing.
RunOutcome run_streams(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir,
                       std::ostream& log, bool live_progress = false, const RunPart* part = nullptr);

// svqa encode: every stream's memory encoded into `memory.cache` (required), as `svqa run` with the
// same encoding would encode it, nothing answered; `svqa run` started before it finishes a stream
// waits for it (the entry's lock) and then answers from it. `dir`: a scratch folder (spill files).
void encode_streams(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir, std::ostream& log);

}  // namespace svqa
