#pragma once
// MLVU dev, multiple-choice tasks (JUNJIE99/MLVU), offline. `annotations` is one of
//   - ReKV's conversion `dev_debug_mc.json` (ReKV-style JSON, benchmarks/datasets/rekv_json.h);
//   - an official task file (`json/1_plotQA.json`: [{video, duration, question, candidates, answer,
//     question_type}]), videos at `<video_root>/<file stem>/<video>` ("video/1_plotQA/x.mp4");
//   - a directory of them (files without `candidates`, the generation tasks, are skipped).
// Category = question_type (the task); M-Avg is the mean of the task accuracies. Gold: the official
// scorer takes the LAST option equal to the answer (ReKV the first: rule rekv).

#include <string>

#include "benchmarks/datasets/annotated_benchmark.h"
#include "core/config/schema.h"

namespace svqa {

struct MlvuOptions {
  std::string annotations;
  std::string video_root;
  int64_t video_path_keep = 2;
  std::string rule = "official";
  static void declare(Schema<MlvuOptions>& s) {
    s.field("annotations", &MlvuOptions::annotations, "dev_debug_mc.json, an official task file, or their directory")
        .required().must_exist("file or directory");
    s.field("video_root", &MlvuOptions::video_root, "directory videos are under; empty: the file's own")
        .must_exist("directory");
    s.field("video_path_keep", &MlvuOptions::video_path_keep,
            "ReKV style: trailing components of video_path kept under video_root (2: <task folder>/<file>)")
        .min(0)
        .max(255);
    s.field("rule", &MlvuOptions::rule, "official: MLVU's prompt and check; rekv: ReKV's prompt and parser")
        .one_of({"official", "rekv"});
  }
};

class Mlvu final : public AnnotatedBenchmark {
 public:
  explicit Mlvu(MlvuOptions options) : options_(std::move(options)) {}
  std::vector<Stream> load(std::vector<LoadProblem>& problems) override;
  AnswerRule answer_rule() const override { return options_.rule == "rekv" ? AnswerRule::rekv : AnswerRule::mlvu; }

 private:
  std::vector<Stream> load_task_file(const std::string& file, std::vector<LoadProblem>& problems);
  MlvuOptions options_;
};

}  // namespace svqa
