#pragma once
// Frames of a video source, sampled at a target rate: a video file (OpenCV/FFmpeg), a .npy array
// of frames, or a directory of images.

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace svqa {

struct Frames {
  at::Tensor rgb;                  // uint8 [N, H, W, 3], RGB, CPU
  std::vector<double> timestamps;  // seconds from the start of the source, one per frame
  double fps = 0;                  // rate of the returned frames (avg_fps / step for a video)
  int64_t first = 0;               // stream index of rgb[0] (a piece of a longer stream starts past 0)
};

// `path` is
//   - a directory: its image files (.jpg .jpeg .png .bmp .webp .tif .tiff .ppm .pgm), sorted by
//     file name (zero-pad numbers: "10.jpg" sorts before "2.jpg"), already sampled: timestamp
//     i / target_fps;
//   - a .npy file: uint8 [N, H, W, 3] RGB frames, already sampled: timestamp i / target_fps;
//   - anything else: a video file. Every step-th frame is kept from frame 0 on, step =
//     max(1, round(avg_fps / target_fps)) with Python's round (halves to even), timestamp =
//     frame index / avg_fps: the sampling rule of the ReKV / StreamKV reference code.
// Throws std::runtime_error naming the path and what was expected.
Frames read_frames(const std::string& path, double target_fps);

// The frame step for a video, as above.
int64_t video_frame_step(double avg_fps, double target_fps);

}  // namespace svqa
