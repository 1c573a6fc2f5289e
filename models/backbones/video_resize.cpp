#include "models/backbones/video_resize.h"

#include <stdexcept>

namespace svqa {

ImageSpec with_video_resize(ImageSpec spec, const VideoResizeOptions& options, const std::string& manifest) {
  if (options.is_default()) return spec;
  const char* kKey = "backbone.options.video_resize";
  if (spec.resize != ImageSpec::Resize::QwenSmart && spec.resize != ImageSpec::Resize::Qwen3Smart)
    throw std::runtime_error(std::string(kKey) + ": sizes Qwen frames only, but " + manifest +
                             " resizes to a fixed size (image.resize is not qwen_smart or qwen3_smart)");
  if (options.rule == "qwen_vl_utils") {
    QwenVideoPixels pixels;
    pixels.factor = spec.factor;
    pixels.min_pixels = options.min_pixels;
    pixels.asked_max_pixels = options.max_pixels;
    pixels.total_pixels = options.total_pixels;
    spec.qwen_vl_utils = pixels;
    return spec;
  }
  if (options.min_pixels > 0) spec.min_pixels = options.min_pixels;
  if (options.max_pixels > 0) spec.max_pixels = options.max_pixels;
  if (spec.max_pixels < spec.min_pixels)
    throw std::runtime_error(std::string(kKey) + ": max_pixels " + std::to_string(spec.max_pixels) +
                             " is below min_pixels " + std::to_string(spec.min_pixels) + " (with " + manifest +
                             "'s bounds)");
  return spec;
}

}  // namespace svqa
