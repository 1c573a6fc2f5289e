#pragma once
// RVS-Ego and RVS-Movie (ReKV's release of VStream-QA's real-time part): streaming, open-ended.
// ReKV-style JSON (benchmarks/datasets/rekv_json.h); each question is asked at its end_time and
// [start_time, end_time] is its evidence window. RVS-Movie's videos are .npy frame arrays at 1 fps.
// Scored by an LLM judge (benchmarks/scoring/llm_judge.h); `svqa score` also reports the retrieval recall of the windows.

#include <string>

#include "benchmarks/datasets/annotated_benchmark.h"
#include "core/config/schema.h"

namespace svqa {

struct RvsOptions {
  std::string annotations;
  std::string video_root;
  int64_t video_path_keep = 1;
  double npy_fps = 1;
  static void declare(Schema<RvsOptions>& s) {
    s.field("annotations", &RvsOptions::annotations, "ego4d_oe.json or movienet_oe.json (ReKV format)")
        .required().must_exist("file");
    s.field("video_root", &RvsOptions::video_root, "directory videos are under; empty: the file's own")
        .must_exist("directory");
    s.field("video_path_keep", &RvsOptions::video_path_keep,
            "trailing components of video_path kept under video_root (0: the whole path)")
        .min(0)
        .max(255);
    s.field("npy_fps", &RvsOptions::npy_fps, "rate the .npy frame arrays were taken at (RVS-Movie: 1)").min(1e-6)
        .max(1000);
  }
};

class Rvs final : public AnnotatedBenchmark {
 public:
  explicit Rvs(RvsOptions options) : options_(std::move(options)) {}
  std::vector<Stream> load(std::vector<LoadProblem>& problems) override;

 private:
  RvsOptions options_;
};

}  // namespace svqa
