#pragma once
// Frames of a video source, sampled at a target rate: a video file (FFmpeg's libraries,
// models/video/video_file.h), a .npy array of frames, or a directory of images (OpenCV).

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/video/frame_sampling.h"

namespace svqa {

struct Frames {
  at::Tensor rgb;                  // uint8 [N, H, W, 3], RGB, CPU
  std::vector<double> timestamps;  // seconds from the start of the source, one per frame: the time each goes by
  double fps = 0;                  // rate of the returned frames
  int64_t first = 0;               // stream index of rgb[0] (a piece of a longer stream starts past 0)
  // When each frame is presented (a video's PTS, s from the stream's start); empty: the timestamps
  // (sources without PTS, and videos under the presented rule, whose timestamps are their PTS).
  std::vector<double> presented{};
  // The frames as the model takes them, [N, ...], made as they were decoded (a reader given a
  // FramePreparer), for a clip of `prepared_clip_frames` frames; undefined where they were not.
  at::Tensor prepared{};
  int64_t prepared_clip_frames = 0;

  // Frame i's presentation time.
  double presented_at(size_t i) const { return presented.empty() ? timestamps[i] : presented[i]; }
};

// `path` is
//   - a directory: its image files (.jpg .jpeg .png .bmp .webp .tif .tiff .ppm .pgm), sorted by
//     file name (zero-pad numbers: "10.jpg" sorts before "2.jpg"), already sampled: timestamp
//     i / target_fps;
//   - a .npy file: uint8 [N, H, W, 3] RGB frames, already sampled: timestamp i / target_fps;
//   - anything else: a video file, sampled as `sampling` says (models/video/frame_sampling.h).
// Throws std::runtime_error naming the path and what was expected.
Frames read_frames(const std::string& path, double target_fps, const VideoSampling& sampling = {});

// The same frames read in order as a stream advances: a video or an image directory is decoded
// only as far as asked (one read's frames and the lookahead upcoming_time() asked for are held,
// however long the source), so memory stays flat over an hour of video. A .npy is read whole.
class FrameReader {
 public:
  virtual ~FrameReader() = default;
  double fps() const { return fps_; }
  // Frames the source says it holds (a video's stated count; exact for the others).
  int64_t expected_frames() const { return expected_; }
  int64_t position() const { return position_; }  // frames read so far
  // Timestamp of the k-th frame after those read (k = 0: the next one); nullopt past the end.
  virtual std::optional<double> upcoming_time(int64_t k) = 0;
  // The next `count` frames (fewer at the end, rgb undefined when none), `first` = position() before.
  virtual Frames read(int64_t count) = 0;

 protected:
  double fps_ = 0;
  int64_t expected_ = 0, position_ = 0;
};

// A frame ([1, H, W, 3] uint8) as the model takes it ([1, ...]), for a clip of `clip_frames`
// frames (the source's expected frame count): a backbone's resize and normalisation, run on the
// prepare thread. A frame it throws on is left unprepared (its reader's caller prepares it, and
// says what is wrong where it would have).
using FramePreparer = std::function<at::Tensor(const at::Tensor& rgb, int64_t clip_frames)>;

// `path` as read_frames takes it. Throws as read_frames when the source cannot be opened.
// Decoding runs on a thread of its own, a bounded queue of frames ahead of the reader, and
// `prepare`, if given (Frames::prepared), on a second one behind it. `decode_threads`: a video
// decoder's threads (0: FFmpeg's choice).
std::unique_ptr<FrameReader> open_frame_reader(const std::string& path, double target_fps,
                                               const VideoSampling& sampling = {}, FramePreparer prepare = {},
                                               int decode_threads = 0);
// A video file sampled by a selector made once the file is open (an index rule: index_selector).
std::unique_ptr<FrameReader> open_video_reader(const std::string& path, const SelectorMaker& selector);
// Frames already in memory (e.g. resampled), handed out as views.
std::unique_ptr<FrameReader> held_frame_reader(Frames frames);

}  // namespace svqa
