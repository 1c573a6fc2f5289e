#pragma once
// backbone.options.video_resize: the size a Qwen backbone's frames are resized to, as the
// reference that a preset reproduces sizes them: the export's processor bounds (the default), those
// bounds replaced, or qwen-vl-utils' fetch_video rule before the processor (a per-clip pixel budget).

#include <cstdint>
#include <string>

#include "core/config/schema.h"
#include "models/video/image_spec.h"

namespace svqa {

struct VideoResizeOptions {
  std::string rule = "processor";
  int64_t min_pixels = 0, max_pixels = 0;
  double total_pixels = 0;
  static void declare(Schema<VideoResizeOptions>& s) {
    s.field("rule", &VideoResizeOptions::rule,
            "processor: the HF processor's smart_resize within the export's pixel bounds (or min_pixels / "
            "max_pixels here); qwen_vl_utils: qwen-vl-utils' fetch_video first (each frame within "
            "max(min(768·f², total_pixels / frames · 2), 1.05·min_pixels), f = patch · merge), then the processor "
            "(Qwen2.5-VL; Qwen3-VL's is called with do_resize=False). Qwen exports only")
        .one_of({"processor", "qwen_vl_utils"});
    s.field("min_pixels", &VideoResizeOptions::min_pixels,
            "processor: the processor's min_pixels (0: the export's); qwen_vl_utils: fetch_video's min_pixels "
            "(0: 128·f²)")
        .min(0)
        .max(1e9);
    s.field("max_pixels", &VideoResizeOptions::max_pixels,
            "processor: the processor's max_pixels (0: the export's); qwen_vl_utils: the caller's max_pixels, "
            "lowering fetch_video's bound (0: none)")
        .min(0)
        .max(1e9);
    s.field("total_pixels", &VideoResizeOptions::total_pixels,
            "qwen_vl_utils: the pixel budget of all a clip's frames (0: 128000·f²·0.9, MODEL_SEQ_LEN's)")
        .min(0)
        .max(1e15);
    s.check("total_pixels", [](const VideoResizeOptions& o) {
      return o.rule == "processor" && o.total_pixels > 0 ? std::string("only with rule: qwen_vl_utils") : std::string();
    });
    s.check("max_pixels", [](const VideoResizeOptions& o) {
      return o.min_pixels > 0 && o.max_pixels > 0 && o.max_pixels < o.min_pixels
                 ? "must be at least min_pixels (" + std::to_string(o.min_pixels) + ")"
                 : std::string();
    });
  }
  bool is_default() const { return rule == "processor" && min_pixels == 0 && max_pixels == 0 && total_pixels == 0; }
};

// `spec` (an export's "image" object, read from `manifest`) with `options` applied. Throws
// std::runtime_error naming backbone.options.video_resize and the manifest where the export's rule
// is not a Qwen one, or where the bounds it leaves cross.
ImageSpec with_video_resize(ImageSpec spec, const VideoResizeOptions& options, const std::string& manifest);

}  // namespace svqa
