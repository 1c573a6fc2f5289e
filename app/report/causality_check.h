#pragma once
// `svqa report`'s causality check: a streaming run must answer a question at t from frames presented
// before t. Records state how far past their question the frames encoded by then were presented
// (`future_s`, from the frames' PTS: 0 under stream.frame_times presented, above 0 where the stride
// rule's index stamps ran ahead of the picture); the report names every run with such records.

#include <string>
#include <vector>

#include "app/report/run_report.h"
#include "app/run/prediction_record.h"

namespace svqa {

// The answered records of a run whose frames were presented after their question.
FramesAfterQuestion frames_after_question(const std::vector<PredictionRecord>& records);

// report.md's section naming each run with such records ("" when none has any).
std::string frames_after_question_md(const std::vector<RunSummary>& runs);

// One line for stderr: "RUN: N of M answered questions used frames presented after the question
// (up to X s; first STREAM/ID at T s)"; "" when the run has none.
std::string frames_after_question_line(const RunSummary& run);

}  // namespace svqa
