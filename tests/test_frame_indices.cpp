// qwen-vl-utils' frame sampling and video frame size (models/video/frame_indices.h) against the Python
// transcription of the reference (tests/fixtures/qwen_frames/make_cases.py): nine videos of different
// frame counts (37 to 108,000), rates (10 to 59.94 fps) and sizes, on the Qwen2.5-VL and Qwen3-VL
// releases' constants, two with the caller's min_pixels, max_pixels or total_pixels.

#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "models/video/frame_indices.h"

namespace svqa {

TEST_CASE("qwen_smart frame indices and sizes equal qwen-vl-utils' on videos of different rates and sizes",
          "[video][frame_indices]") {
  std::ifstream in("tests/fixtures/qwen_frames/cases.json");
  REQUIRE(in);
  const auto cases = nlohmann::json::parse(in);
  REQUIRE(cases.size() >= 5);
  for (const auto& c : cases) {
    const auto total = c["total_frames"].get<int64_t>();
    const auto video_fps = c["video_fps"].get<double>();
    INFO(c["release"].get<std::string>() << ": " << total << " frames at " << video_fps << " fps");
    QwenFrameRule rule;
    rule.fps = c["fps"].get<double>();
    CHECK(qwen_smart_nframes(total, video_fps, rule) == c["nframes"].get<int64_t>());
    CHECK(qwen_frame_indices(total, video_fps, rule) == c["indices"].get<std::vector<int64_t>>());
    QwenVideoPixels pixels;
    pixels.factor = c["factor"].get<int64_t>();
    pixels.asked_max_pixels = c["asked_max_pixels"].get<int64_t>();
    pixels.min_pixels = c["min_pixels"].get<int64_t>();
    pixels.total_pixels = c["total_pixels"].get<double>();
    const auto size = qwen_video_frame_size(c["height"].get<int64_t>(), c["width"].get<int64_t>(),
                                            c["nframes"].get<int64_t>(), pixels);
    CHECK(std::vector<int64_t>{size.first, size.second} == c["resized"].get<std::vector<int64_t>>());
  }
}

TEST_CASE("qwen_smart frames: a video too short for one temporal patch is refused as the reference refuses it",
          "[video][frame_indices]") {
  CHECK_THROWS_WITH(qwen_smart_nframes(1, 30.0, QwenFrameRule{}),
                    "qwen_smart frames: 0 frames from a video of 1 (expected between 2 and the video's count)");
  CHECK_THROWS_AS(qwen_smart_nframes(100, 0.0, QwenFrameRule{}), std::invalid_argument);
}

}  // namespace svqa
