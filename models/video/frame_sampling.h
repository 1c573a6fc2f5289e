#pragma once
// Which of a video's decoded frames are kept, and the time each kept frame goes by.
//   presented (the default): the first frame presented at or after each k / fps (k = 0, 1, ...), by its
//              PTS, stamped with its PTS: a frame's time is when it is shown, on any frame rate;
//   stride:    every step-th decoded frame from frame 0, stamped index / avg_fps: the ReKV / StreamKV
//              reference code's rule on decord (step: FrameStep). On a variable-rate file, or at
//              29.97 fps, such a stamp can be earlier than the frame's PTS.
// A rule that names frame indices (keep these) plugs in as a FrameSelector too.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace svqa {

struct VideoInfo;

enum class FrameTimes { Presented, Stride };
// "presented" | "stride"; throws std::invalid_argument otherwise.
FrameTimes frame_times_from_name(const std::string& name);

enum class FrameStep {
  Reference,  // max(1, int(round(avg_fps) / target_fps)): ReKV video_qa/base.py (Python's round: halves to even)
  Nearest,    // max(1, round(avg_fps / target_fps)), halves to even
  QwenSmart,  // not a stride: qwen-vl-utils' smart_nframes indices over the whole video (frame_indices.h)
};
// "reference" | "nearest" | "qwen_smart"; throws std::invalid_argument otherwise.
FrameStep frame_step_from_name(const std::string& name);

// The stride rule's frame step (Reference or Nearest).
int64_t video_frame_step(double avg_fps, double target_fps, FrameStep step = FrameStep::Reference);

// How a video file is sampled (a .npy or an image directory is already sampled: it ignores this).
struct VideoSampling {
  FrameTimes times = FrameTimes::Presented;
  // Under stride, which frames; QwenSmart picks its indices under either times (stamped by PTS
  // under presented, index / avg_fps under stride); presented ignores the other two.
  FrameStep step = FrameStep::Reference;
};

// Told every decoded frame in presentation order; keeps some.
class FrameSelector {
 public:
  virtual ~FrameSelector() = default;
  // Whether to keep frame `index` (decoded frames before it) presented at `presented` s from the
  // stream's start; when kept, `stamp` is the time it goes by.
  virtual bool keep(int64_t index, double presented, double& stamp) = 0;
  // Whether no later frame will be kept (decoding stops).
  virtual bool finished() const { return false; }
  double fps = 0;        // rate of the kept frames
  int64_t expected = 0;  // frames it will keep, as far as the container's stated count says
};

// The selector of `sampling` at `target_fps` for a video as `info` describes it.
std::unique_ptr<FrameSelector> frame_selector(const VideoSampling& sampling, double target_fps, const VideoInfo& info);

// Keeps the decoded frames at `indices` (ascending, repeats kept once), stamped index / avg_fps
// (or by PTS with `times` Presented): for rules that pick indices from the stated frame count
// (qwen-vl-utils' smart_nframes). The kept frames' rate (FrameSelector::fps) is `rate`, the rule's
// own (qwen-vl-utils' sample_fps), else (0) their mean rate over the indices' span.
std::unique_ptr<FrameSelector> index_selector(std::vector<int64_t> indices, double avg_fps,
                                              FrameTimes times = FrameTimes::Stride, double rate = 0);

// A selector made once the video is open (its info known).
using SelectorMaker = std::function<std::unique_ptr<FrameSelector>(const VideoInfo&)>;

}  // namespace svqa
