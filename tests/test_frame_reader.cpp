// Frames read as a stream advances are the frames read whole, piece by piece, for every kind of
// source; a reader holds only what it was asked for.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>

#include "benchmarks/synthetic_video.h"
#include "models/video/frame_source.h"
#include "models/video/npy.h"
#include "tests/strategy_fixtures.h"

namespace svqa {
namespace {

// Reads `reader` in pieces of 3, checking upcoming_time against the whole read first.
void check_pieces(FrameReader& reader, const Frames& whole) {
  const int64_t n = whole.rgb.size(0);
  CHECK(reader.fps() == Approx(whole.fps));
  int64_t at = 0;
  while (at < n) {
    for (int64_t k = 0; k < 3; ++k) {
      const auto t = reader.upcoming_time(k);
      if (at + k < n) CHECK(t.value_or(-1) == Approx(whole.timestamps[static_cast<size_t>(at + k)]));
      else CHECK(!t);
    }
    const Frames piece = reader.read(3);
    const int64_t got = std::min<int64_t>(3, n - at);
    REQUIRE(piece.rgb.size(0) == got);
    CHECK(piece.first == at);
    CHECK(piece.rgb.equal(whole.rgb.narrow(0, at, got)));
    at += got;
  }
  CHECK(reader.position() == n);
  CHECK(!reader.read(2).rgb.defined());
}

}  // namespace

TEST_CASE("a frame reader gives the whole read in pieces: video, image directory, .npy", "[frames]") {
  const auto dir = std::filesystem::path(test::temp_dir("reader"));
  std::filesystem::create_directories(dir);
  const std::string video = (dir / "clip.avi").string();
  write_synthetic_video(video, {20, 4, 64, 48, 5});
  for (const double fps : {4.0, 1.0}) {
    INFO("video at " << fps << " fps");
    const Frames whole = read_frames(video, fps);
    auto reader = open_frame_reader(video, fps);
    CHECK(reader->expected_frames() == whole.rgb.size(0));
    check_pieces(*reader, whole);
  }
  const Frames frames = test::random_frames(7, 16, 24, 2.0);
  std::filesystem::create_directories(dir / "images");
  for (int64_t i = 0; i < 7; ++i) {  // binary PPM: a header, then the RGB bytes
    const auto rgb = frames.rgb[i].contiguous();
    std::ofstream ppm(dir / "images" / ("f" + std::to_string(i) + ".ppm"), std::ios::binary);
    ppm << "P6\n24 16\n255\n";
    ppm.write(static_cast<const char*>(rgb.data_ptr()), rgb.numel());
  }
  {
    INFO("image directory");
    auto reader = open_frame_reader((dir / "images").string(), 2.0);
    check_pieces(*reader, read_frames((dir / "images").string(), 2.0));
  }
  write_npy((dir / "frames.npy").string(), frames.rgb);
  {
    INFO(".npy");
    auto reader = open_frame_reader((dir / "frames.npy").string(), 2.0);
    check_pieces(*reader, read_frames((dir / "frames.npy").string(), 2.0));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace svqa
