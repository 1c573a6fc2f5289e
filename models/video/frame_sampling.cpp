#include "models/video/frame_sampling.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "models/video/frame_indices.h"
#include "models/video/video_file.h"

namespace svqa {
namespace {

// PTS are exact rationals; k / fps is not always: a frame within a nanosecond of k / fps is at it.
constexpr double kSlack = 1e-9;

class PresentedSelector final : public FrameSelector {
 public:
  PresentedSelector(double target_fps, const VideoInfo& info) : target_(target_fps) {
    fps = info.avg_fps > 0 ? std::min(target_fps, info.avg_fps) : target_fps;
    expected = info.avg_fps > 0 ? static_cast<int64_t>(std::ceil(static_cast<double>(info.frames) * fps / info.avg_fps))
                                : static_cast<int64_t>(std::ceil(info.duration * fps));
  }
  bool keep(int64_t, double presented, double& stamp) override {
    if (presented * target_ + kSlack < static_cast<double>(next_)) return false;
    // The next time to fill is the first k / fps after this frame (a gap fills once, with this frame).
    next_ = static_cast<int64_t>(std::floor(presented * target_ + kSlack)) + 1;
    stamp = presented;
    return true;
  }

 private:
  double target_;
  int64_t next_ = 0;
};

class StrideSelector final : public FrameSelector {
 public:
  StrideSelector(int64_t step, const VideoInfo& info) : step_(step), avg_fps_(info.avg_fps) {
    fps = avg_fps_ / static_cast<double>(step_);
    expected = (info.frames + step_ - 1) / step_;
  }
  bool keep(int64_t index, double, double& stamp) override {
    if (index % step_ != 0) return false;
    stamp = static_cast<double>(index) / avg_fps_;
    return true;
  }

 private:
  int64_t step_;
  double avg_fps_;
};

class IndexSelector final : public FrameSelector {
 public:
  IndexSelector(std::vector<int64_t> indices, double avg_fps, FrameTimes times, double rate)
      : indices_(std::move(indices)), avg_fps_(avg_fps), by_pts_(times == FrameTimes::Presented) {
    if (!std::is_sorted(indices_.begin(), indices_.end()))
      throw std::invalid_argument("frame indices: expected indices in ascending order");
    // A stream shows a frame once: where a rule repeats an index, once (smart_nframes never does).
    indices_.erase(std::unique(indices_.begin(), indices_.end()), indices_.end());
    expected = static_cast<int64_t>(indices_.size());
    fps = rate > 0 ? rate
          : indices_.size() > 1 && avg_fps > 0
              ? static_cast<double>(indices_.size() - 1) * avg_fps / static_cast<double>(indices_.back() - indices_.front())
              : avg_fps;
  }
  bool keep(int64_t index, double presented, double& stamp) override {
    if (finished() || index != indices_[next_]) return false;
    ++next_;
    stamp = by_pts_ ? presented : static_cast<double>(index) / avg_fps_;
    return true;
  }
  bool finished() const override { return next_ == indices_.size(); }

 private:
  std::vector<int64_t> indices_;
  double avg_fps_;
  bool by_pts_;
  size_t next_ = 0;
};

}  // namespace

FrameTimes frame_times_from_name(const std::string& name) {
  if (name == "presented") return FrameTimes::Presented;
  if (name == "stride") return FrameTimes::Stride;
  throw std::invalid_argument("frame times: expected presented or stride, got '" + name + "'");
}

FrameStep frame_step_from_name(const std::string& name) {
  if (name == "reference") return FrameStep::Reference;
  if (name == "nearest") return FrameStep::Nearest;
  if (name == kQwenSmartFrameStep) return FrameStep::QwenSmart;
  throw std::invalid_argument("frame step: expected reference, nearest or qwen_smart, got '" + name + "'");
}

int64_t video_frame_step(double avg_fps, double target_fps, FrameStep step) {
  if (step == FrameStep::QwenSmart) throw std::invalid_argument("frame step: qwen_smart picks indices, it has no stride");
  // std::nearbyint rounds halves to even, as Python's round().
  const double stride = step == FrameStep::Reference ? std::nearbyint(avg_fps) / target_fps : std::nearbyint(avg_fps / target_fps);
  return std::max<int64_t>(1, static_cast<int64_t>(stride));
}

std::unique_ptr<FrameSelector> frame_selector(const VideoSampling& sampling, double target_fps, const VideoInfo& info) {
  if (sampling.step == FrameStep::QwenSmart) {
    QwenFrameRule rule;
    rule.fps = target_fps;
    // The kept frames go by the asked rate, however the 4- and 768-frame bounds spread them: InfiniPot-V
    // asks 2 fps and spaces Qwen2.5-VL's temporal patches one a second (get_rope_index without
    // second_per_grid_ts), i.e. 2 frames a second, whatever the video's length.
    return index_selector(qwen_frame_indices(info.frames, info.avg_fps, rule), info.avg_fps, sampling.times,
                          target_fps);
  }
  if (sampling.times == FrameTimes::Presented) return std::make_unique<PresentedSelector>(target_fps, info);
  return std::make_unique<StrideSelector>(video_frame_step(info.avg_fps, target_fps, sampling.step), info);
}

std::unique_ptr<FrameSelector> index_selector(std::vector<int64_t> indices, double avg_fps, FrameTimes times,
                                              double rate) {
  return std::make_unique<IndexSelector>(std::move(indices), avg_fps, times, rate);
}

}  // namespace svqa
