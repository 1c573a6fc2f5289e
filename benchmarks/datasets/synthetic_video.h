#pragma once
// A synthetic video whose content at every time is known: the demo's stream and a planted-signal
// source for tests. The background colour changes every `phase_seconds` through kSyntheticColors,
// a white square crosses the frame once per phase, and the second count is drawn in the corner.

#include <array>
#include <string>

namespace svqa {

inline constexpr std::array<const char*, 6> kSyntheticColors{"red", "green", "blue", "yellow", "purple", "cyan"};

struct SyntheticVideoOptions {
  double seconds = 130;
  double fps = 2;
  int width = 320, height = 240;
  double phase_seconds = 20;
};

// Writes an MJPEG .avi with OpenCV's built-in encoder (no FFmpeg needed). Throws naming the path.
void write_synthetic_video(const std::string& path, const SyntheticVideoOptions& options);

// The background colour name at time t.
std::string synthetic_color_at(double t, const SyntheticVideoOptions& options);

}  // namespace svqa
