#pragma once
// LVBench (THUDM/LVBench `video_info.meta.jsonl`): offline multiple choice on hour-long videos.
// One JSON line per video {key, type, qa: [{uid, question, answer, question_type, time_reference}]};
// the options are lines "(A) …" inside `question` and are split out of it. Video file:
// `<key><video_extension>` under video_root. Question id = uid; categories = question_type (a list:
// a question counts in each); evidence = time_reference; gold = answer (a letter).

#include <string>

#include "benchmarks/datasets/annotated_benchmark.h"
#include "core/config/schema.h"

namespace svqa {

struct LvBenchOptions {
  std::string annotations;
  std::string video_root;
  std::string video_extension = ".mp4";
  std::string rule = "official";
  static void declare(Schema<LvBenchOptions>& s) {
    s.field("annotations", &LvBenchOptions::annotations, "video_info.meta.jsonl").required().must_exist("file");
    s.field("video_root", &LvBenchOptions::video_root, "directory of <key><video_extension>; empty: the file's own")
        .must_exist("directory");
    s.field("video_extension", &LvBenchOptions::video_extension, "appended to key");
    s.field("rule", &LvBenchOptions::rule,
            "official: ReKV's prompt with LVBench's polish_answer parser; rekv: ReKV's prompt and parser")
        .one_of({"official", "rekv"});
  }
};

class LvBench final : public AnnotatedBenchmark {
 public:
  explicit LvBench(LvBenchOptions options) : options_(std::move(options)) {}
  std::vector<Stream> load(std::vector<LoadProblem>& problems) override;
  AnswerRule answer_rule() const override { return options_.rule == "rekv" ? AnswerRule::rekv : AnswerRule::lvbench; }

 private:
  LvBenchOptions options_;
};

}  // namespace svqa
