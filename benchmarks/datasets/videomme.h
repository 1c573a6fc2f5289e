#pragma once
// Video-MME (MME-Benchmarks/Video-MME), offline multiple choice; papers report the Long split.
// Three shapes of annotation file are read (detected from the first record):
//   - Hugging Face rows (`lmms-lab/Video-MME` exported to JSON or JSON Lines): one question per row
//     {video_id, duration, domain, sub_category, videoID, question_id, task_type, question,
//      options ["A. …"], answer (letter)};
//   - the official scorer's template (one entry per video with `questions`): the same fields;
//   - the ReKV-style conversion (gdace829/HERMES videomme.json): {video_id, video_path,
//     duration_category, conversations [{question, choices, answer (text), question_type}]}.
// Video file: `<videoID><video_extension>` (`video_id` where there is no videoID) under
// video_root, or video_path for the ReKV style. Category = task_type (question_type).

#include <string>

#include "benchmarks/datasets/annotated_benchmark.h"
#include "core/config/schema.h"

namespace svqa {

struct VideoMmeOptions {
  std::string annotations;
  std::string video_root;
  std::string video_extension = ".mp4";
  int64_t video_path_keep = 1;
  std::string duration = "long";
  std::string rule = "official";
  static void declare(Schema<VideoMmeOptions>& s) {
    s.field("annotations", &VideoMmeOptions::annotations, "Video-MME rows (JSON/JSONL), scorer template or videomme.json")
        .required().must_exist("file");
    s.field("video_root", &VideoMmeOptions::video_root, "directory videos are under; empty: the file's own")
        .must_exist("directory");
    s.field("video_extension", &VideoMmeOptions::video_extension, "appended to videoID");
    s.field("video_path_keep", &VideoMmeOptions::video_path_keep,
            "ReKV style: trailing components of video_path kept under video_root (0: the whole path)")
        .min(0)
        .max(255);
    s.field("duration", &VideoMmeOptions::duration, "the split: videos of this duration group, or all")
        .one_of({"short", "medium", "long", "all"});
    s.field("rule", &VideoMmeOptions::rule,
            "official: Video-MME's prompt and answer extraction; rekv: ReKV's prompt and parser")
        .one_of({"official", "rekv"});
  }
};

class VideoMme final : public AnnotatedBenchmark {
 public:
  explicit VideoMme(VideoMmeOptions options) : options_(std::move(options)) {}
  std::vector<Stream> load(std::vector<LoadProblem>& problems) override;
  AnswerRule answer_rule() const override { return options_.rule == "rekv" ? AnswerRule::rekv : AnswerRule::videomme; }

 private:
  VideoMmeOptions options_;
};

}  // namespace svqa
