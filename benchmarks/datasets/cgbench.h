#pragma once
// CG-Bench (CG-Bench/CG-Bench `cgbench.json`, `cgbench_mini.json`): offline multiple choice with
// 5–8 options and clue intervals. Records are questions, not grouped by video; streams are the
// videos (`<video_uid><video_extension>` under video_root) in order of first appearance.
// Question id = qid; category = sub_category; evidence = clue_intervals; gold = right_answer.

#include <string>

#include "benchmarks/datasets/annotated_benchmark.h"
#include "core/config/schema.h"

namespace svqa {

struct CgBenchOptions {
  std::string annotations;
  std::string video_root;
  std::string video_extension = ".mp4";
  std::string rule = "official";
  static void declare(Schema<CgBenchOptions>& s) {
    s.field("annotations", &CgBenchOptions::annotations, "cgbench.json or cgbench_mini.json")
        .required().must_exist("file");
    s.field("video_root", &CgBenchOptions::video_root, "directory of <video_uid><video_extension>; empty: the file's own")
        .must_exist("directory");
    s.field("video_extension", &CgBenchOptions::video_extension, "appended to video_uid");
    s.field("rule", &CgBenchOptions::rule,
            "official: CG-Bench's long_acc prompt and JSON-then-letters parser; rekv: ReKV's prompt and parser "
            "(what ReKV and Mem-Stream report)")
        .one_of({"official", "rekv"});
  }
};

class CgBench final : public AnnotatedBenchmark {
 public:
  explicit CgBench(CgBenchOptions options) : options_(std::move(options)) {}
  std::vector<Stream> load(std::vector<LoadProblem>& problems) override;
  AnswerRule answer_rule() const override { return options_.rule == "rekv" ? AnswerRule::rekv : AnswerRule::cgbench; }

 private:
  CgBenchOptions options_;
};

}  // namespace svqa
