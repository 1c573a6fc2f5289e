#pragma once
// Which frames a question at time t sees (stream.frames_before_question, by stream.frame_times).
//   exclusive, frame_times stride: the first int(t · fps) sampled frames, [0, int(t·fps)) by index —
//              the reference code's rule (ReKV video_qa/rekv_stream_vqa.py, MuKV, StreamKV's
//              video[0:int(end_time·fps)]);
//   exclusive, frame_times presented: every frame presented before t (timestamp < t);
//   inclusive: every frame whose timestamp is at or before t (one more, newest frame at whole seconds).

#include <cstdint>
#include <string>

#include "core/memory/kv_block.h"
#include "models/video/frame_sampling.h"

namespace svqa {

enum class FrameRule {
  Exclusive,  // by index: [0, int(t·fps))
  Inclusive,  // timestamp <= t
  Before,     // timestamp < t
};

// "exclusive" | "inclusive"; throws std::invalid_argument otherwise. `exclusive` is by index under
// the stride rule (the reference code's slice) and by time under the presented rule.
FrameRule frame_rule_from_name(const std::string& name, FrameTimes times = FrameTimes::Stride);

// int(t · fps) as ReKV computes it: t in a float32 tensor times the rate, truncated. An infinite
// t (an offline question): every frame.
int64_t frames_before(double time, double fps);

// Whether `rule` lets the frame at stream index `index`, stamped `timestamp`, be seen at `time`.
bool frame_before_question(FrameRule rule, double fps, int64_t index, double timestamp, double time);

// The same for a block of memory: all its frames.
inline bool block_before_question(FrameRule rule, double fps, const KvBlock& b, double time) {
  return frame_before_question(rule, fps, b.last_frame, b.end_time, time);
}

}  // namespace svqa
