#pragma once
// Frame supply: the frames of a stream at the run's sampling rate.

#include <memory>

#include "engine/benchmark.h"
#include "models/backbones/backbone.h"
#include "models/video/frame_source.h"

namespace svqa {

// The stream's video read at `fps`, decoded as the stream advances; sources stored at a known
// rate (Stream::source_fps, e.g. RVS-Movie's 1-fps .npy) are read whole and resampled as ReKV does.
// Throws on a video that cannot be opened. `sampling`: a video file's rule (models/video/frame_sampling.h).
// `prepare`: each decoded frame's preprocessing, run on the decode thread (frame_preparer).
std::unique_ptr<FrameReader> stream_frames(const Stream& stream, double fps, const VideoSampling& sampling = {},
                                           FramePreparer prepare = {});

// `backbone`'s resize and normalisation of one frame (models/video/frame_preprocessor.h,
// normalized_frames), for the decode thread: a run's preprocessing overlaps its model.
FramePreparer frame_preparer(const Backbone& backbone);

// Frames taken at `all.fps` sampled down to `fps` as ReKV does: indices linspace(0, N-1, int(N * fps / all.fps)),
// truncated; timestamps stay those of the kept frames. Fewer frames asked than there are: all of them.
Frames resample_frames(const Frames& all, double fps);

}  // namespace svqa
