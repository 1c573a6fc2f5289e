// backbone.options.video_resize (models/backbones/video_resize.h) and the sizes preprocess_frames gives
// under it: qwen-vl-utils' fetch_video size, then the Qwen2.5-VL processor's smart_resize; Qwen3-VL's
// processor left out (its model card calls it with do_resize=False).

#include <catch2/catch.hpp>

#include "models/video/frame_preprocessor.h"
#include "models/backbones/video_resize.h"

namespace svqa {
namespace {

ImageSpec qwen2_5_spec() {
  ImageSpec spec;
  spec.resize = ImageSpec::Resize::QwenSmart;
  spec.patch_size = 14, spec.merge_size = 2, spec.temporal_patch_size = 2, spec.factor = 28;
  spec.min_pixels = 3136, spec.max_pixels = 12845056;
  return spec;
}

ImageSpec qwen3_spec() {
  ImageSpec spec;
  spec.resize = ImageSpec::Resize::Qwen3Smart;
  spec.patch_size = 16, spec.merge_size = 2, spec.temporal_patch_size = 2, spec.factor = 32;
  spec.min_pixels = 16384, spec.max_pixels = 25165824;  // over the clip: 4 frames of 32 x 32 are under it
  return spec;
}

VideoResizeOptions qwen_vl_utils(int64_t min_pixels, int64_t max_pixels, double total_pixels) {
  VideoResizeOptions o;
  o.rule = "qwen_vl_utils";
  o.min_pixels = min_pixels, o.max_pixels = max_pixels, o.total_pixels = total_pixels;
  return o;
}

}  // namespace

TEST_CASE("video_resize qwen_vl_utils sizes a Qwen2.5-VL clip as fetch_video, then as the processor",
          "[video][video_resize]") {
  const ImageSpec spec = with_video_resize(qwen2_5_spec(), qwen_vl_utils(784, 0, 12000), "m.json");
  REQUIRE(spec.qwen_vl_utils);
  CHECK(spec.qwen_vl_utils->factor == 28);
  // fetch_video: within max(min(768·28², 12000 / 6 · 2), int(784 · 1.05)) = 4000 pixels, 47 x 85 → 28 x 84;
  // the processor's min_pixels 3136 then grows that to 56 x 112 (without the rule: 56 x 84).
  CHECK(qwen_processor_size(47, 85, 6, spec) == std::pair<int64_t, int64_t>{56, 112});
  CHECK(qwen_processor_size(47, 85, 6, qwen2_5_spec()) == std::pair<int64_t, int64_t>{56, 84});
  const VisualInput input = preprocess_frames(at::zeros({6, 47, 85, 3}, at::kByte), spec);
  CHECK(input.grid_thw == std::array<int64_t, 3>{3, 4, 8});
}

TEST_CASE("video_resize qwen_vl_utils sizes a Qwen3-VL clip as fetch_video alone (do_resize=False)",
          "[video][video_resize]") {
  const ImageSpec spec = with_video_resize(qwen3_spec(), qwen_vl_utils(1024, 2048, 0), "m.json");
  // fetch_video: the caller's max_pixels 2048: 64 x 96 → 32 x 32; the processor's clip minimum (16384 over
  // 4 frames) would have grown it to 64 x 64; the processor alone keeps 64 x 96.
  CHECK(qwen_processor_size(64, 96, 4, spec) == std::pair<int64_t, int64_t>{32, 32});
  CHECK(preprocess_frames(at::zeros({4, 64, 96, 3}, at::kByte), spec).grid_thw == std::array<int64_t, 3>{2, 2, 2});
  CHECK(preprocess_frames(at::zeros({4, 64, 96, 3}, at::kByte), qwen3_spec()).grid_thw ==
        std::array<int64_t, 3>{2, 4, 6});
}

TEST_CASE("video_resize processor replaces the export's bounds; the default leaves the spec as it is",
          "[video][video_resize]") {
  VideoResizeOptions o;
  o.max_pixels = 200 * 28 * 28;  // Mem-Stream's 200-256 tokens per frame-feature
  o.min_pixels = 256 * 28 * 28 - 1;
  CHECK_THROWS_WITH(with_video_resize(qwen2_5_spec(), o, "m.json"), Catch::Contains("max_pixels"));
  o.min_pixels = 200 * 28 * 28, o.max_pixels = 256 * 28 * 28;
  const ImageSpec spec = with_video_resize(qwen2_5_spec(), o, "m.json");
  CHECK((spec.min_pixels == 156800 && spec.max_pixels == 200704 && !spec.qwen_vl_utils));
  const ImageSpec same = with_video_resize(qwen2_5_spec(), VideoResizeOptions{}, "m.json");
  CHECK((same.min_pixels == 3136 && same.max_pixels == 12845056 && !same.qwen_vl_utils));
}

TEST_CASE("video_resize on an export with a fixed size is refused naming the key and the manifest",
          "[video][video_resize]") {
  ImageSpec fixed;
  fixed.height = fixed.width = 384;
  CHECK_THROWS_WITH(with_video_resize(fixed, qwen_vl_utils(0, 0, 0), "exports/llava/manifest.json"),
                    "backbone.options.video_resize: sizes Qwen frames only, but exports/llava/manifest.json resizes "
                    "to a fixed size (image.resize is not qwen_smart or qwen3_smart)");
  CHECK_NOTHROW(with_video_resize(fixed, VideoResizeOptions{}, "exports/llava/manifest.json"));
}

}  // namespace svqa
