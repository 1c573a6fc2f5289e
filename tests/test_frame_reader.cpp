// Frames read as a stream advances are the frames read whole, piece by piece, for every kind of
// source; a reader holds only what it was asked for.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>
#include <vector>

#include "benchmarks/datasets/synthetic_video.h"
#include "models/video/frame_source.h"
#include "models/video/npy.h"
#include "models/video/video_file.h"
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

TEST_CASE("frame selectors: presented keeps the first frame at or after each k/fps, stride every step-th", "[frames]") {
  VideoInfo info;
  info.avg_fps = 30, info.frames = 90, info.duration = 3;
  // 30 fps for 1 s, then a gap to 2.5 s, then 30 fps again: a frame per 1/2 s, the gap filled once.
  std::vector<double> pts;
  for (int i = 0; i < 30; ++i) pts.push_back(i / 30.0);
  for (int i = 0; i < 15; ++i) pts.push_back(2.5 + i / 30.0);
  auto kept = [&](FrameSelector& s) {
    std::vector<std::pair<int64_t, double>> out;
    double stamp = 0;
    for (size_t i = 0; i < pts.size(); ++i)
      if (s.keep(static_cast<int64_t>(i), pts[i], stamp)) out.emplace_back(static_cast<int64_t>(i), stamp);
    return out;
  };
  auto presented = frame_selector({FrameTimes::Presented}, 2.0, info);
  CHECK(kept(*presented) == std::vector<std::pair<int64_t, double>>{{0, 0.0}, {15, 0.5}, {30, 2.5}});
  auto stride = frame_selector({FrameTimes::Stride, FrameStep::Reference}, 2.0, info);
  CHECK(kept(*stride) == std::vector<std::pair<int64_t, double>>{{0, 0.0}, {15, 0.5}, {30, 1.0}});
  CHECK(stride->fps == 2.0);
  auto indices = index_selector({1, 29, 44}, 30.0);
  CHECK(kept(*indices) == std::vector<std::pair<int64_t, double>>{{1, 1 / 30.0}, {29, 29 / 30.0}, {44, 44 / 30.0}});
  CHECK(indices->finished());
  auto repeated = index_selector({3, 3, 7}, 30.0, FrameTimes::Presented);  // a frame named twice is shown once
  CHECK(repeated->expected == 2);
  CHECK(kept(*repeated) == std::vector<std::pair<int64_t, double>>{{3, 3 / 30.0}, {7, 7 / 30.0}});
  CHECK_THROWS_WITH(index_selector({7, 3}, 30.0), Catch::Contains("ascending"));
}

TEST_CASE("an .npy written row by row reads back as written at once; unfinished, nothing is left", "[frames]") {
  const auto dir = std::filesystem::path(test::temp_dir("npy_writer"));
  std::filesystem::create_directories(dir);
  const at::Tensor rows = at::randint(0, 256, {23, 5, 7, 3}, at::kByte);
  {
    NpyWriter writer((dir / "rows.npy").string());
    for (int64_t at = 0; at < 23; at += 4) writer.append(rows.narrow(0, at, std::min<int64_t>(4, 23 - at)));
    CHECK(!std::filesystem::exists(dir / "rows.npy"));  // nothing at the path until finished
    writer.finish();
  }
  CHECK(read_npy((dir / "rows.npy").string()).equal(rows));
  {
    NpyWriter writer((dir / "left.npy").string());
    writer.append(rows.narrow(0, 0, 2));
    CHECK_THROWS_WITH(writer.append(at::zeros({1, 5, 8, 3}, at::kByte)), Catch::Contains("after rows of"));
  }
  CHECK(std::distance(std::filesystem::directory_iterator(dir), {}) == 1);  // rows.npy: no temporary
  std::filesystem::remove_all(dir);
}

}  // namespace svqa
