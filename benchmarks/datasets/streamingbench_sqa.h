#pragma once
// StreamingBench's Sequential Question Answering (THUNLP-MT/StreamingBench `src/data/questions_sqa.json`,
// 50 videos, 250 questions): a list of videos, each a list of windows {time, questions, video_categories,
// video_path} with real-time-style questions. The questions of one video are asked in the file's order
// (src/benchmark/StreamingBenchSQA.py), each prompt carrying the context string of every earlier
// question of that video with its gold answer: "Here are the contextual information ...: At timestamp
// T, the following question and answer occurred: Question: ...; Options: A. .., B. .., C. .., D. ..;
// Answer: X; " (Question::tags["sqa_context"], built here, as the official code builds it). Stream id
// = the video file name without extension; question id = "<stream>_<k>", k the question's index among
// the video's in the file. Options: `streamingbench`'s. Rule `official`: the SQA prompt (a question
// with a context) and count.py's sqa task, the first character of the response.

#include <string>

#include "benchmarks/datasets/streamingbench.h"

namespace svqa {

// The context string the official code has built when it reaches a question, given the one it had
// before the previous question and that question (options as the prompt shows them, "A. "-prefixed).
std::string sqa_context_after(const std::string& context, const Question& previous);

class StreamingBenchSqa final : public AnnotatedBenchmark {
 public:
  explicit StreamingBenchSqa(StreamingBenchOptions options) : options_(std::move(options)) {}
  std::vector<Stream> load(std::vector<LoadProblem>& problems) override;
  AnswerRule answer_rule() const override {
    return options_.rule == "rekv" ? AnswerRule::rekv : AnswerRule::streamingbench;
  }

 private:
  StreamingBenchOptions options_;
};

}  // namespace svqa
