// `svqa embed`: an image-text export's embeddings of frames or texts — to check an export, and for
// the parity tests against the Hugging Face model.

#define CXXOPTS_VECTOR_DELIMITER '\x1f'  // as in cli.cpp: one cxxopts configuration per program
#include <cxxopts.hpp>

#include <iostream>
#include <regex>
#include <nlohmann/json.hpp>

#include "app/cli/cli_commands.h"
#include "core/config/runtime.h"
#include "models/video/frame_source.h"
#include "models/image_text/image_text_model.h"
#include "models/video/npy.h"

namespace svqa {

int cmd_embed(int argc, const char* const* argv) {
  cxxopts::Options options("svqa embed", "Embed frames or texts with an image-text export (L2-normalised rows); "
                                         "prints one JSON object.");
  options.add_options()("model", "image-text export directory (python -m models.export.image_text)",
                        cxxopts::value<std::string>())(
      "frames", "video file, .npy frames [N,H,W,3] uint8 or image directory", cxxopts::value<std::string>())(
      "text", "a text to embed (repeatable: one row each)", cxxopts::value<std::vector<std::string>>())(
      "fps", "sampling rate (video files) or rate the frames were taken at (.npy, images)",
      cxxopts::value<double>()->default_value("1"))("out", "write the embeddings [N, D] float32 .npy",
                                                    cxxopts::value<std::string>())(
      "device", "cpu, cuda, cuda:1, ...", cxxopts::value<std::string>()->default_value("cpu"))("h,help",
                                                                                                 "show this help");
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  if (!args.count("model")) throw UsageError("missing --model");
  if (args.count("frames") == args.count("text") || args.count("frames") > 1)
    throw UsageError("expected either --frames SRC or --text TEXT (repeatable)");
  if (!args.unmatched().empty()) throw UsageError("unexpected argument '" + args.unmatched()[0] + "'");
  at::Device device(at::kCPU);
  const std::string device_name = args["device"].as<std::string>();
  if (!std::regex_match(device_name, std::regex(kDevicePattern)))
    throw UsageError("--device '" + device_name + "': expected " + kDevicePatternDoc);
  device = require_device_support(device_name, "--device");

  ImageTextModel model(args["model"].as<std::string>(), device);
  nlohmann::json report = {{"architecture", model.manifest().architecture}};
  at::Tensor embeddings;
  if (args.count("frames")) {
    const Frames frames = read_frames(args["frames"].as<std::string>(), args["fps"].as<double>());
    embeddings = model.embed_images(frames.rgb);
  } else {
    std::vector<at::Tensor> rows;
    nlohmann::json ids = nlohmann::json::array();
    for (const auto& text : args["text"].as<std::vector<std::string>>()) {
      rows.push_back(model.embed_text(text));
      ids.push_back(model.text_ids(text));
    }
    embeddings = at::stack(rows);
    report["input_ids"] = std::move(ids);
  }
  report["shape"] = embeddings.sizes().vec();
  if (args.count("out")) write_npy(args["out"].as<std::string>(), embeddings.to(at::kCPU).contiguous());
  std::cout << report.dump() << "\n";
  return 0;
}

}  // namespace svqa
