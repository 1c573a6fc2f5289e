#pragma once
// StreamingBench's Sequential Question Answering (THUNLP-MT/StreamingBench `src/data/questions_sqa.json`,
// 50 videos, 250 questions): a list of videos, each a list of windows {time, questions, video_categories,
// video_path} with real-time-style questions. The questions of one video are asked in the file's order
// (src/benchmark/StreamingBenchSQA.py), each prompt carrying the context string of every earlier
// question of that video with its gold answer: "Here are the contextual information ...: At timestamp
// T, the following question and answer occurred: Question: ...; Options: A. .., B. .., C. .., D. ..;
// Answer: X; " (Question::tags["sqa_context"], built here, as the official code builds it). Stream id
// = the video file name without extension; question id = "<stream>_<k>", k the question's index among
// the video's in the file. Rule `streamingbench`: its SQA prompt for a question with a context, and
// count.py's sqa task, the first character of the response.

#include <string>

#include "benchmarks/streamingbench.h"

namespace svqa {

struct StreamingBenchSqaOptions {
  std::string annotations;
  std::string video_root;
  int64_t video_path_keep = 1;
  std::string malformed_stamps = "fix";
  static void declare(Schema<StreamingBenchSqaOptions>& s) {
    s.field("annotations", &StreamingBenchSqaOptions::annotations, "questions_sqa.json").required();
    s.field("video_root", &StreamingBenchSqaOptions::video_root, "directory videos are under; empty: the file's own");
    s.field("video_path_keep", &StreamingBenchSqaOptions::video_path_keep,
            "trailing components of video_path kept under video_root (0: the whole path)")
        .min(0);
    s.field("malformed_stamps", &StreamingBenchSqaOptions::malformed_stamps,
            "a time_stamp like \"00:12450\": fix (read as 0:12:45), drop the question, or official (12450 s)")
        .one_of({"fix", "drop", "official"});
  }
};

// The context string the official code has built when it reaches a question, given the one it had
// before the previous question and that question (options as the prompt shows them, "A. "-prefixed).
std::string sqa_context_after(const std::string& context, const Question& previous);

class StreamingBenchSqa final : public AnnotatedBenchmark {
 public:
  explicit StreamingBenchSqa(StreamingBenchSqaOptions options) : options_(std::move(options)) {}
  std::vector<Stream> load(std::vector<LoadProblem>& problems) override;
  AnswerRule answer_rule() const override { return AnswerRule::streamingbench; }

 private:
  StreamingBenchSqaOptions options_;
};

}  // namespace svqa
