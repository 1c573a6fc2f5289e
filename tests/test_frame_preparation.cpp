// Frames prepared for the model as they are decoded (issue 35): each frame resized and normalised
// alone, then the clip's patches made from them, is bit for bit the preprocessing of the clip at
// once; and the preparer runs on a thread of the reader's (behind its decode thread), not the caller's.

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "benchmarks/datasets/synthetic_video.h"
#include "models/video/frame_preprocessor.h"
#include "models/video/frame_source.h"
#include "tests/strategy_fixtures.h"

namespace svqa {
namespace {

ImageSpec spec_of(ImageSpec::Resize resize) {
  ImageSpec s;
  s.resize = resize;
  s.mean = {0.48, 0.46, 0.41};
  s.std = {0.27, 0.26, 0.28};
  if (resize == ImageSpec::Resize::Fixed) s.height = 20, s.width = 28;
  if (resize == ImageSpec::Resize::ShortestEdgeCrop) s.shortest_edge = 24, s.height = 24, s.width = 24;
  if (resize == ImageSpec::Resize::QwenSmart || resize == ImageSpec::Resize::Qwen3Smart) {
    s.patch_size = 4, s.merge_size = 2, s.factor = 8, s.temporal_patch_size = 2;
    s.min_pixels = 8 * 8 * 4, s.max_pixels = resize == ImageSpec::Resize::Qwen3Smart ? 6 * 24 * 32 : 24 * 32;
  }
  return s;
}

// Frames [first, first + count) prepared one by one, joined, and turned into the clip's input.
VisualInput prepared_one_by_one(const at::Tensor& rgb, const ImageSpec& spec, int64_t clip_frames) {
  std::vector<at::Tensor> each;
  for (int64_t i = 0; i < rgb.size(0); ++i) each.push_back(normalized_frames(rgb.narrow(0, i, 1), spec, clip_frames));
  return clip_input(at::cat(each), spec);
}

}  // namespace

TEST_CASE("frames prepared one at a time are bit for bit the clip preprocessed at once", "[frames][preprocess]") {
  const at::Tensor rgb = test::random_frames(6, 37, 53, 2.0).rgb;  // odd sizes: every resize rule resizes
  for (const auto resize : {ImageSpec::Resize::Fixed, ImageSpec::Resize::ShortestEdgeCrop, ImageSpec::Resize::QwenSmart,
                            ImageSpec::Resize::Qwen3Smart}) {
    const ImageSpec spec = spec_of(resize);
    INFO("resize rule " << static_cast<int>(resize));
    for (const auto interpolation : {ImageSpec::Interpolation::Bicubic, ImageSpec::Interpolation::Bilinear}) {
      ImageSpec s = spec;
      s.interpolation = interpolation;
      const VisualInput whole = preprocess_frames(rgb, s, 6);
      const VisualInput parts = prepared_one_by_one(rgb, s, 6);
      CHECK(whole.grid_thw == parts.grid_thw);
      REQUIRE(whole.pixels.sizes() == parts.pixels.sizes());
      CHECK(at::equal(whole.pixels, parts.pixels));
    }
  }
}

TEST_CASE("a reader's preparer runs on a thread of its own and gives each frame's preparation", "[frames][preprocess]") {
  const auto dir = std::filesystem::path(test::temp_dir("prepared"));
  std::filesystem::create_directories(dir);
  const std::string video = (dir / "clip.avi").string();
  write_synthetic_video(video, {20, 4, 64, 48, 5});
  const ImageSpec spec = spec_of(ImageSpec::Resize::Fixed);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  auto reader = open_frame_reader(video, 4.0, {}, [&](const at::Tensor& rgb, int64_t clip_frames) {
    std::lock_guard<std::mutex> lock(mutex);
    threads.insert(std::this_thread::get_id());
    return normalized_frames(rgb, spec, clip_frames);
  });
  int64_t read = 0;
  for (Frames piece = reader->read(3); piece.rgb.defined(); piece = reader->read(3)) {
    REQUIRE(piece.prepared.defined());
    CHECK(piece.prepared_clip_frames == reader->expected_frames());
    CHECK(at::equal(piece.prepared, normalized_frames(piece.rgb, spec, reader->expected_frames())));
    read += piece.rgb.size(0);
  }
  CHECK(read == reader->expected_frames());
  std::lock_guard<std::mutex> lock(mutex);
  CHECK(threads.size() == 1);
  CHECK(threads.count(std::this_thread::get_id()) == 0);
}

TEST_CASE("a frame the preparer throws on is left unprepared for the caller", "[frames][preprocess]") {
  const auto dir = std::filesystem::path(test::temp_dir("unprepared"));
  std::filesystem::create_directories(dir);
  const std::string video = (dir / "clip.avi").string();
  write_synthetic_video(video, {8, 4, 32, 24, 5});
  auto reader = open_frame_reader(video, 4.0, {}, [](const at::Tensor&, int64_t) -> at::Tensor {
    throw std::invalid_argument("cannot");
  });
  const Frames piece = reader->read(4);
  CHECK(piece.rgb.size(0) == 4);
  CHECK(!piece.prepared.defined());
}

}  // namespace svqa
