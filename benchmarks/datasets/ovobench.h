#pragma once
// OVO-Bench (JoeLeelyf/OVO-Bench `data/ovo_bench_new.json`): 1,640 records over 644 videos, 12 tasks
// in three groups (constant.py): backward tracing EPM, ASI, HLD and real-time perception OCR, ACR,
// ATR, STU, FPD, OJR are multiple choice asked once at `realtime`; the forward tasks REC, SSR, CRR
// are asked once per probe of `test_info`, each at its own `realtime`, with their own prompts
// (REC: a count; SSR, CRR: Yes/No). The official clips end at ceil(realtime) (utils/chunk_videos.py),
// so a question is asked there. Streams are the videos (stream id = the file name without its
// extension); question id = the record's `id`, a probe's "<id>_<probe index>" (the official clip's
// name); category = task; tags: group, item (`id`), probe (forward only). Gold: the letter of `gt`
// (the file's `answer` text disagrees with options[gt] in 420 records: the scorer uses gt); REC
// the probe's `count`; SSR/CRR "Yes" for `type` 1 and "No" for 0 (Question::answer_letter).

#include <string>

#include "benchmarks/datasets/annotated_benchmark.h"
#include "core/config/schema.h"

namespace svqa {

struct OvoBenchOptions {
  std::string annotations;
  std::string video_root;
  int64_t video_path_keep = 0;
  static void declare(Schema<OvoBenchOptions>& s) {
    s.field("annotations", &OvoBenchOptions::annotations, "ovo_bench_new.json").required().must_exist("file");
    s.field("video_root", &OvoBenchOptions::video_root,
            "directory the `video` paths are under (the official src_videos); empty: the file's own")
                .must_exist("directory");
    s.field("video_path_keep", &OvoBenchOptions::video_path_keep,
            "trailing components of `video` kept under video_root (0: the whole path)")
        .min(0)
        .max(255);
  }
};

// constant.py's task groups, in its order; "" for a task not in OVO-Bench.
std::string ovobench_group(const std::string& task);
bool ovobench_forward(const std::string& task);

class OvoBench final : public AnnotatedBenchmark {
 public:
  explicit OvoBench(OvoBenchOptions options) : options_(std::move(options)) {}
  std::vector<Stream> load(std::vector<LoadProblem>& problems) override;
  AnswerRule answer_rule() const override { return AnswerRule::ovobench; }

 private:
  OvoBenchOptions options_;
};

}  // namespace svqa
