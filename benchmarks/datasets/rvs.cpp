#include "benchmarks/datasets/rvs.h"

#include "benchmarks/datasets/rekv_json.h"

namespace svqa {

std::vector<Stream> Rvs::load(std::vector<LoadProblem>& problems) {
  AnnotationReader r(options_.annotations, problems);
  RekvJsonRules rules;
  rules.streaming = true;
  rules.window_is_evidence = true;
  rules.video_root = options_.video_root;
  rules.video_path_keep = static_cast<int>(options_.video_path_keep);
  rules.npy_fps = options_.npy_fps;
  return read_rekv_json(r, rules);
}

}  // namespace svqa
