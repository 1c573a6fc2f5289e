#pragma once
// StreamingBench's Proactive Output (THUNLP-MT/StreamingBench `src/data/questions_proactive.json`:
// 248 entries, 250 questions, 50 videos): entries {time, questions, video_categories, video_path},
// each question {task_type, question, time_stamp, ground_truth_time_stamp, ground_truth_output,
// required_ability}. As src/benchmark/StreamingBenchProactive.py asks it: once a second from
// time_stamp + 1 s to ground_truth_time_stamp + 4 s the model is polled with '<question> Is it the
// right time to output "<ground_truth_output>"? You can only answer yes or no.' (Question::poll_text,
// poll_times); at the first poll whose answer holds "yes" it is asked the question itself, at that
// time, and polling stops. Both go in the official PROMPT_TEMPLATE_PROACTIVE. Scored as count.py:
// time-correct iff the last turn's time is within ±2 s of the ground-truth time, answer-correct iff
// also the ground-truth output occurs in the last answer. Stream id = the video file name without
// extension; question id = "<stream>_<k>", k the question's index among the video's in the file.

#include <optional>
#include <string>

#include "benchmarks/datasets/streamingbench.h"

namespace svqa {

// The official PROMPT_TEMPLATE_PROACTIVE with `query` in it.
std::string proactive_prompt(const std::string& query);
// The official yes/no query of a question (its poll_text).
std::string proactive_poll_query(const std::string& question, const std::string& ground_truth_output);
// The official polling schedule: time_stamp + 1, + 2, ... while at most ground_truth + 4 (seconds).
std::vector<double> proactive_poll_times(double time_stamp, double ground_truth_time);

// count.py's verdict on a proactive question whose last turn was at `last_time` with `last_answer`:
// correct iff |last_time - ground truth| <= 2 and the ground-truth output occurs in the answer;
// `parsed` says "on time" or "off time" (the time verdict alone). Unanswered without a time.
Verdict proactive_verdict(const Question& q, std::optional<double> last_time, const std::string& last_answer);
// Whether `q` is a proactive question (carries the ground-truth time this rule needs).
bool is_proactive(const Question& q);
// The ground-truth time of a proactive question, seconds.
double proactive_ground_truth_time(const Question& q);

class StreamingBenchProactive final : public AnnotatedBenchmark {
 public:
  explicit StreamingBenchProactive(StreamingBenchOptions options) : options_(std::move(options)) {}
  std::vector<Stream> load(std::vector<LoadProblem>& problems) override;
  AnswerRule answer_rule() const override { return AnswerRule::streamingbench; }
  // The poll query or the question (whichever the Question's text is) in the official template.
  std::string question_text(const Question& q) const override { return proactive_prompt(q.text); }
  std::string answer_prefix(const Question& q) const override { return ((void)q, ""); }
  // count.py's rule with q.time as the time of the answer (app/run/proactive_polling.h sets it).
  Verdict verdict(const Question& q, const std::string& output) const override {
    return proactive_verdict(q, q.time, output);
  }
  bool has_gold(const Question& q) const override { return is_proactive(q); }

 private:
  StreamingBenchOptions options_;
};

}  // namespace svqa
