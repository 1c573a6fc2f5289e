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
// `prepare`: each decoded frame's preprocessing, run on a thread of its own (frame_preparer).
// `decode_threads`: the video decoder's threads (decode_threads_beside; 0: FFmpeg's choice).
std::unique_ptr<FrameReader> stream_frames(const Stream& stream, double fps, const VideoSampling& sampling = {},
                                           FramePreparer prepare = {}, int decode_threads = 0);

// `backbone`'s resize and normalisation of one frame (models/video/frame_preprocessor.h,
// normalized_frames), for the prepare thread: a run's preprocessing overlaps its model.
FramePreparer frame_preparer(const Backbone& backbone);

// The decoder's threads beside `backbone`: on the CPU the cores its threads and the prepare thread
// leave (one at least), since FFmpeg's own choice (the cores + 1) would take the model's cores and
// wait on them; on a GPU FFmpeg's choice (0).
int decode_threads_beside(const Backbone& backbone);

// Frames taken at `all.fps` sampled down to `fps` as ReKV does: indices linspace(0, N-1, int(N * fps / all.fps)),
// truncated; timestamps stay those of the kept frames. Fewer frames asked than there are: all of them.
Frames resample_frames(const Frames& all, double fps);

}  // namespace svqa
