// `svqa frames`: what a video source yields at a rate (count, size, timestamps) and, with
// --preprocess, what a backbone's vision module would get — to check a source, and for the
// parity tests against the Hugging Face processors.

#define CXXOPTS_VECTOR_DELIMITER '\x1f'  // as in cli.cpp: one cxxopts configuration per program
#include <cxxopts.hpp>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/cli_commands.h"
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

// What `frames` says of the frames read; the frames themselves are not in it.
nlohmann::json frames_report(int64_t count, int64_t height, int64_t width, double fps, const std::vector<double>& timestamps,
                             const std::vector<double>& presented) {
  nlohmann::json report = {{"frames", count}, {"height", height}, {"width", width}, {"fps", fps}, {"timestamps", timestamps}};
  if (!presented.empty()) report["presented"] = presented;  // the stride rule's stamps are not the PTS
  return report;
}

// The source read a frame at a time (decoded on its own thread), each frame written to `out` as
// it comes: memory holds the decode queue however long the video.
nlohmann::json streamed(const std::string& source, double fps, const VideoSampling& sampling, const std::string& out,
                        int decode_threads) {
  constexpr int64_t kPiece = 1;  // a frame at a time: written from the decoded frame itself, nothing copied
  auto reader = open_frame_reader(source, fps, sampling, {}, decode_threads);
  std::unique_ptr<NpyWriter> writer;
  if (!out.empty()) writer = std::make_unique<NpyWriter>(out);
  std::vector<double> timestamps, presented;
  int64_t height = 0, width = 0;
  for (;;) {
    const Frames piece = reader->read(kPiece);
    if (!piece.rgb.defined()) break;
    height = piece.rgb.size(1), width = piece.rgb.size(2);
    timestamps.insert(timestamps.end(), piece.timestamps.begin(), piece.timestamps.end());
    presented.insert(presented.end(), piece.presented.begin(), piece.presented.end());
    if (writer) writer->append(piece.rgb);
  }
  if (writer) writer->finish();
  return frames_report(static_cast<int64_t>(timestamps.size()), height, width, reader->fps(), timestamps, presented);
}

// All frames, preprocessed as one clip (Qwen3-VL sizes frames by the clip's length): held whole.
nlohmann::json preprocessed(const std::string& source, double fps, const VideoSampling& sampling, const ImageSpec& spec,
                            const std::string& out) {
  const Frames frames = read_frames(source, fps, sampling);
  nlohmann::json report = frames_report(frames.rgb.size(0), frames.rgb.size(1), frames.rgb.size(2), frames.fps,
                                        frames.timestamps, frames.presented);
  const VisualInput input = preprocess_frames(frames.rgb, spec);
  report["pixels_shape"] = input.pixels.sizes().vec();
  if (spec.resize == ImageSpec::Resize::QwenSmart || spec.resize == ImageSpec::Resize::Qwen3Smart) report["grid_thw"] = input.grid_thw;
  if (!out.empty()) write_npy(out, input.pixels);
  return report;
}

}  // namespace

VideoSampling video_sampling_options(const std::string& frame_times, const std::string& frame_step) {
  VideoSampling sampling;
  try {
    sampling.times = frame_times_from_name(frame_times);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--frame-times: ") + e.what());
  }
  try {
    sampling.step = frame_step_from_name(frame_step);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--frame-step: ") + e.what());
  }
  return sampling;
}

int cmd_frames(int argc, const char* const* argv) {
  cxxopts::Options options("svqa frames", "Read a video source at a rate; optionally preprocess it for a backbone. "
                                          "Prints one JSON object.");
  options.add_options()("source", "video file, .npy frames [N,H,W,3] uint8, or a directory of images",
                        cxxopts::value<std::string>())(
      "fps", "sampling rate (video files) or rate the frames were taken at (.npy, images)",
      cxxopts::value<double>()->default_value("1"))(
      "frame-times", "a video's frames and times: presented (the first frame shown at or after each k/fps, at its "
                     "PTS) or stride (every frame-step-th frame, at index / avg_fps: ReKV's)",
      cxxopts::value<std::string>()->default_value("presented"))(
      "frame-step", "the stride rule's step: reference (int(round(avg_fps) / fps), ReKV's) or nearest (round(avg_fps / fps)); "
                     "qwen_smart: qwen-vl-utils' smart_nframes indices (either --frame-times)",
      cxxopts::value<std::string>()->default_value("reference"))(
      "preprocess", "JSON file (an export manifest) whose \"image\" object is the image spec",
      cxxopts::value<std::string>())(
      "out", "write .npy: the preprocessed pixels with --preprocess, else the RGB frames [N,H,W,3] uint8",
      cxxopts::value<std::string>())(
      "decode-threads", "a video decoder's threads (0: FFmpeg's choice, the cores + 1; `svqa run` on the CPU gives "
                        "it the cores its model leaves)",
      cxxopts::value<int>()->default_value("0"))("h,help", "show this help");
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
  const VideoSampling sampling =
      video_sampling_options(args["frame-times"].as<std::string>(), args["frame-step"].as<std::string>());
  const std::string source = args["source"].as<std::string>();
  const std::string out = args.count("out") ? args["out"].as<std::string>() : "";
  const int decode_threads = args["decode-threads"].as<int>();
  if (decode_threads < 0 || decode_threads > 64) throw UsageError("--decode-threads: expected 0 to 64");

  // Read the spec first: a bad spec file fails before a long decode.
  nlohmann::json report;
  if (args.count("preprocess"))
    report = preprocessed(source, fps, sampling, read_image_spec(args["preprocess"].as<std::string>()), out);
  else
    report = streamed(source, fps, sampling, out, decode_threads);
  std::cout << report.dump() << "\n";
  return 0;
}

}  // namespace svqa
