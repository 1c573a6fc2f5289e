#pragma once
// A video file decoded with FFmpeg's libraries (libavformat, libavcodec, libswscale): every frame in
// presentation order as uint8 RGB, with its presentation time, turned as FFmpeg's autorotate turns
// it (the display matrix, else the legacy `rotate` tag).

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>

namespace svqa {

// What the container says of the video stream, before anything is decoded.
struct VideoInfo {
  double avg_fps = 0;      // the stream's average frame rate (r_frame_rate where it states none)
  int64_t frames = 0;      // the stated frame count (estimated from the duration where none): a hint
  double duration = 0;     // seconds, 0 where unknown
  int rotation = 0;        // degrees clockwise applied to every frame: 0, 90, 180 or 270
};

// One decoded frame.
struct DecodedFrame {
  at::Tensor rgb;          // uint8 [H, W, 3], already rotated (VideoFile::rgb())
  double presented = 0;    // PTS in seconds from the stream's start time
  int64_t index = 0;       // decoded frames before it
};

class VideoFile {
 public:
  // Throws std::runtime_error "PATH: what" when the file cannot be opened as a video.
  // `decode_threads`: the decoder's threads (0: FFmpeg's choice, the cores + 1).
  explicit VideoFile(const std::string& path, int decode_threads = 0);
  ~VideoFile();
  VideoFile(const VideoFile&) = delete;
  VideoFile& operator=(const VideoFile&) = delete;

  const VideoInfo& info() const { return info_; }
  // Decodes the next frame: its time and index (rgb left undefined: only kept frames pay for the
  // conversion); false at the end. A damaged packet is skipped and a file cut short ends where it
  // is cut: the frames decoded are returned, with their own times.
  bool next(DecodedFrame& frame);
  // The frame next() decoded last, as uint8 RGB [H, W, 3], turned.
  at::Tensor rgb();

 private:
  struct State;
  std::unique_ptr<State> state_;
  VideoInfo info_;
};

}  // namespace svqa
