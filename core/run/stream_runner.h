#pragma once
// Runs an experiment: for each stream, encodes frames only up to each question's time, answers it
// from memory, records the answer, what was retrieved, time and memory; then goes on encoding.

#include <ostream>
#include <string>

#include "core/config/experiment.h"
#include "core/engine/registries.h"

namespace svqa {

// Writes DIR/predictions.jsonl (appended per question; a rerun resumes) and DIR/metrics.json
// and DIR/scores.json (atomically, at the end: the benchmark's official table, open-ended answers
// judged when a judge is configured). Progress and the final table go to `log`; with
// `live_progress` (a terminal) a bar is redrawn while a stream is encoded. Returns the number of
// questions that ended in an error (recorded, not thrown).
int run_streams(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir, std::ostream& log,
                bool live_progress = false);

// svqa encode: every stream's memory encoded into `memory.cache` (required), as `svqa run` with the
// same encoding would encode it, nothing answered; `svqa run` started before it finishes a stream
// waits for it (the entry's lock) and then answers from it. `dir`: a scratch folder (spill files).
void encode_streams(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir, std::ostream& log);

}  // namespace svqa
