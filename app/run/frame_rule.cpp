#include "app/run/frame_rule.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace svqa {

FrameRule frame_rule_from_name(const std::string& name, FrameTimes times) {
  if (name == "exclusive") return times == FrameTimes::Stride ? FrameRule::Exclusive : FrameRule::Before;
  if (name == "inclusive") return FrameRule::Inclusive;
  throw std::invalid_argument("stream.frames_before_question: expected exclusive or inclusive, got '" + name + "'");
}

int64_t frames_before(double time, double fps) {
  if (!std::isfinite(time)) return time > 0 ? std::numeric_limits<int64_t>::max() : 0;
  // ReKV: torch.tensor([start_time, end_time]) * sample_fps (float32), then int(): truncation.
  const float product = static_cast<float>(time) * static_cast<float>(fps);
  return product <= 0 ? 0 : static_cast<int64_t>(product);
}

bool frame_before_question(FrameRule rule, double fps, int64_t index, double timestamp, double time) {
  if (rule == FrameRule::Exclusive) return index < frames_before(time, fps);
  return rule == FrameRule::Before ? timestamp < time : timestamp <= time;
}

}  // namespace svqa
