#pragma once
// The ReKV-style per-video JSON shared by ReKV, MuKV, StreamKV and their conversions (RVS-Ego,
// RVS-Movie, MLVU's dev_debug_mc.json, Video-MME's videomme.json, EgoSchema's full.json):
//
//   [{"video_id": str, "video_path": str, "duration": s,
//     "conversations": [{"question": str, "answer": str|null, "choices": [str, ...],   // choices: MC
//                        "question_type": str|int, "start_time": s, "end_time": s,      // optional
//                        "temporal_windows": [[s, e], ...]}]}]
//
// Stream id = video_id, or "<video_path's folder>/<video_id>" where video_id repeats (MLVU);
// question id = "<stream id>_<k>", k its index in `conversations` (ReKV's prediction keys).

#include <string>
#include <vector>

#include "benchmarks/datasets/annotation_reader.h"

namespace svqa {

struct RekvJsonRules {
  bool streaming = false;      // true: asked at end_time (required); false: offline (after the video)
  bool window_is_evidence = false;  // [start_time, end_time] is the evidence (RVS)
  std::string video_root;
  int video_path_keep = 1;     // see resolve_video()
  double npy_fps = 0;          // Stream::source_fps of .npy videos
};

std::vector<Stream> read_rekv_json(AnnotationReader& r, const RekvJsonRules& rules);

}  // namespace svqa
