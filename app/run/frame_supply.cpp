#include "app/run/frame_supply.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "models/video/frame_preprocessor.h"

namespace svqa {

std::unique_ptr<FrameReader> stream_frames(const Stream& stream, double fps, const VideoSampling& sampling,
                                           FramePreparer prepare, int decode_threads) {
  if (stream.source_fps > 0) return held_frame_reader(resample_frames(read_frames(stream.video, stream.source_fps), fps));
  return open_frame_reader(stream.video, fps, sampling, std::move(prepare), decode_threads);
}

int decode_threads_beside(const Backbone& backbone) {
  if (!backbone.device().is_cpu()) return 0;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores - at::get_num_threads() - 1);
}

FramePreparer frame_preparer(const Backbone& backbone) {
  return [spec = backbone.manifest().image](const at::Tensor& rgb, int64_t clip_frames) {
    return normalized_frames(rgb, spec, clip_frames);
  };
}

Frames resample_frames(const Frames& all, double fps) {
  const int64_t n = all.rgb.size(0);
  const int64_t k = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(n) * fps / all.fps));
  if (k >= n) return all;
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < k; ++i)
    keep.push_back(k == 1 ? 0 : static_cast<int64_t>(static_cast<double>(i) * static_cast<double>(n - 1) / static_cast<double>(k - 1)));
  Frames out;
  out.rgb = all.rgb.index_select(0, at::tensor(keep, at::kLong));
  out.fps = fps;
  for (const int64_t i : keep) {
    out.timestamps.push_back(all.timestamps[static_cast<size_t>(i)]);
    if (!all.presented.empty()) out.presented.push_back(all.presented[static_cast<size_t>(i)]);
  }
  return out;
}

}  // namespace svqa
