#pragma once
// Proactive questions (Question::poll_times, StreamingBench's Proactive Output): every poll of every
// question of a stream is asked in time order over the one memory of the stream (questions whose
// polls interleave take turns), so the stream is encoded once, forward only, and each poll sees
// only the frames before its time under the run's frame rule. A poll is a question in its own right
// (answer_one: the encoder told, retrieval over the memory, its own time to first token); on the
// first answer the benchmark's poll_says_yes accepts, the question itself is asked at that time and
// the question's polling stops. One record per question, written when it finishes: the last turn's
// answer, time and retrieval, and extra.dialog_history with every turn as the official code records
// it ({role, content, time, cost}) plus, on the model's turns, the prompt's question text, the time
// to first token and the spans of the blocks retrieved; extra.answered: the time of the yes, or false.

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "app/run/prediction_log.h"
#include "app/run/question_step.h"

namespace svqa {

struct PolledStream {
  // Encodes the stream up to `time` (frames before it), returning what was encoded.
  std::function<StreamEncoding::Step(double time)> encode_until;
  // Writes a finished question's record.
  std::function<void(const PredictionRecord&)> record;
};

// Each poll is a model call (retrieval, prefill, decoding): a question with many polls is hours of
// work, and one with more than a day of once-a-second polls is a broken annotation.
constexpr int64_t kManyPolls = 3600;    // warned: an hour of once-a-second polls
constexpr int64_t kMostPolls = 86400;   // refused: a day of them

// Before the model loads: one warning line to `log` per question of `streams` with more than
// kManyPolls polls, naming it and its polls; std::invalid_argument naming the first question with
// more than kMostPolls (its stream, id, polls and first and last poll times).
void check_poll_counts(const std::vector<Stream>& streams, std::ostream& log);

// Answers every question of `questions` (each with poll_times) not yet in `log`. Questions in `log`
// (a resumed run) are told to the encoder again at their recorded polls (replay_answered), so the
// memory changes as it did then. Throws on as answer_one does.
void run_polled_stream(const QuestionStep& step, StreamEncoding& stream, const std::string& stream_id,
                       const std::vector<Question>& questions, const PredictionLog& log, const PolledStream& io);

}  // namespace svqa
