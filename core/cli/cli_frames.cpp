// `svqa frames`: what a video source yields at a rate (count, size, timestamps) and, with
// --preprocess, what a backbone's vision module would get — to check a source, and for the
// parity tests against the Hugging Face processors.

#define CXXOPTS_VECTOR_DELIMITER '\x1f'  // as in cli.cpp: one cxxopts configuration per program
#include <cxxopts.hpp>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/cli/cli_commands.h"
#include "models/video/frame_preprocessor.h"
#include "models/video/frame_source.h"
#include "models/video/npy.h"
#include "core/io/json_text.h"

namespace svqa {
namespace {

// The "image" object of a manifest (or of any JSON file holding one).
ImageSpec read_image_spec(const std::string& path) {
  const nlohmann::json j = read_json_file(path);
  if (!j.is_object() || !j.contains("image"))
    throw std::runtime_error(path + ": image: missing (expected an object with the backbone's \"image\" spec)");
  return image_spec_from_json(j.at("image"), path);
}

}  // namespace

int cmd_frames(int argc, const char* const* argv) {
  cxxopts::Options options("svqa frames", "Read a video source at a rate; optionally preprocess it for a backbone. "
                                          "Prints one JSON object.");
  options.add_options()("source", "video file, .npy frames [N,H,W,3] uint8, or a directory of images",
                        cxxopts::value<std::string>())(
      "fps", "sampling rate (video files) or rate the frames were taken at (.npy, images)",
      cxxopts::value<double>()->default_value("1"))(
      "frame-step", "a video's stride: reference (int(round(avg_fps) / fps), ReKV's) or nearest (round(avg_fps / fps))",
      cxxopts::value<std::string>()->default_value("reference"))(
      "preprocess", "JSON file (an export manifest) whose \"image\" object is the image spec",
      cxxopts::value<std::string>())(
      "out", "write .npy: the preprocessed pixels with --preprocess, else the RGB frames [N,H,W,3] uint8",
      cxxopts::value<std::string>())("h,help", "show this help");
  options.parse_positional({"source"});
  options.positional_help("SOURCE");
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  if (!args.count("source")) throw UsageError("missing the source (video file, .npy or image directory)");
  if (!args.unmatched().empty()) throw UsageError("unexpected argument '" + args.unmatched()[0] + "'");
  const double fps = args["fps"].as<double>();
  if (!(fps > 0)) throw UsageError("--fps must be positive");
  const std::string step_name = args["frame-step"].as<std::string>();
  if (step_name != "reference" && step_name != "nearest") throw UsageError("--frame-step must be reference or nearest");

  // Read the spec first: a bad spec file fails before a long decode.
  std::optional<ImageSpec> spec;
  if (args.count("preprocess")) spec = read_image_spec(args["preprocess"].as<std::string>());
  const Frames frames = read_frames(args["source"].as<std::string>(), fps, frame_step_from_name(step_name));
  nlohmann::json report = {{"frames", frames.rgb.size(0)},
                           {"height", frames.rgb.size(1)},
                           {"width", frames.rgb.size(2)},
                           {"fps", frames.fps},
                           {"timestamps", frames.timestamps}};
  at::Tensor written = frames.rgb;
  if (spec) {
    const VisualInput input = preprocess_frames(frames.rgb, *spec);
    report["pixels_shape"] = input.pixels.sizes().vec();
    if (spec->resize == ImageSpec::Resize::QwenSmart || spec->resize == ImageSpec::Resize::Qwen3Smart) report["grid_thw"] = input.grid_thw;
    written = input.pixels;
  }
  if (args.count("out")) write_npy(args["out"].as<std::string>(), written);
  std::cout << report.dump() << "\n";
  return 0;
}

}  // namespace svqa
