// `svqa probe`: the full-context reference path on given frames and text — what users run to
// check an export, and what the backbone parity tests call.

#define CXXOPTS_VECTOR_DELIMITER '\x1f'
#include <cxxopts.hpp>

#include <ATen/Parallel.h>

#include <chrono>
#include <iostream>
#include <regex>
#include <nlohmann/json.hpp>

#include "app/cli/cli_commands.h"
#include "core/config/runtime.h"
#include "models/video/frame_preprocessor.h"
#include "models/video/frame_source.h"
#include "models/backbones/full_context.h"
#include "models/video/npy.h"
#include "models/backbones/torchscript_backbone.h"

namespace svqa {

namespace {

// --device checked against the pattern and against what this build and machine support.
at::Device probe_device(const std::string& name) {
  if (!std::regex_match(name, std::regex(kDevicePattern)))
    throw UsageError("--device '" + name + "': expected " + kDevicePatternDoc);
  return require_device_support(name, "--device");
}

// --logits, --visual, --positions and --prompt-ids: each array asked for, as .npy.
void write_requested_arrays(const cxxopts::ParseResult& args, const at::Tensor& logits, const VisualFeatures& visual,
                            const PromptSequence& seq) {
  if (args.count("logits")) write_npy(args["logits"].as<std::string>(), logits);
  if (args.count("visual")) write_npy(args["visual"].as<std::string>(), visual.tokens.to(at::kFloat).contiguous());
  if (args.count("positions")) write_npy(args["positions"].as<std::string>(), seq.positions.contiguous());
  if (args.count("prompt-ids")) write_npy(args["prompt-ids"].as<std::string>(), seq.ids.contiguous());
}

}  // namespace

int cmd_probe(int argc, const char* const* argv) {
  cxxopts::Options options("svqa probe",
                           "Run an export on frames and a question with everything in context; print the greedy answer.");
  options.add_options()("export", "export directory (python -m models.export)", cxxopts::value<std::string>())(
      "frames", "video file, .npy frames [N,H,W,3] uint8 or image directory", cxxopts::value<std::string>())(
      "prompt", "the question", cxxopts::value<std::string>())(
      "fps", "sampling rate (video files) or rate the frames were taken at (.npy, images)",
      cxxopts::value<double>()->default_value("2"))("logits", "write the last position's logits [vocab] float32 .npy",
                                                    cxxopts::value<std::string>())(
      "positions", "write the prompt's rotary positions [3, T] int64 .npy", cxxopts::value<std::string>())(
      "visual", "write the visual tokens [n, hidden] float32 .npy", cxxopts::value<std::string>())(
      "prompt-ids", "write the prompt's token ids [T] int64 .npy (-1 at visual tokens)", cxxopts::value<std::string>())(
      "hidden-states", "write each layer's output over the prompt [layers, T, hidden] float32 .npy",
      cxxopts::value<std::string>())(
      "generate", "greedy tokens to generate (stops at EOS)", cxxopts::value<int64_t>()->default_value("20"))(
      "device", "cpu, cuda, cuda:1, ...", cxxopts::value<std::string>()->default_value("cpu"))(
      "threads", "intra-op CPU threads (0: torch default)", cxxopts::value<int>()->default_value("0"))(
      "h,help", "show this help");
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  for (const char* required : {"export", "frames", "prompt"})
    if (!args.count(required)) throw UsageError(std::string("missing --") + required);
  if (!args.unmatched().empty()) throw UsageError("unexpected argument '" + args.unmatched()[0] + "'");
  if (args["threads"].as<int>() > 0) at::set_num_threads(args["threads"].as<int>());
  const at::Device device = probe_device(args["device"].as<std::string>());
  at::InferenceMode inference;
  const auto t0 = std::chrono::steady_clock::now();
  TorchScriptBackbone backbone(args["export"].as<std::string>(), device);
  const Frames frames = read_frames(args["frames"].as<std::string>(), args["fps"].as<double>());
  const VisualInput input = preprocess_frames(frames.rgb, backbone.manifest().image);
  const auto visual = backbone.encode_visual(input);
  const auto seq = video_prompt_sequence(backbone, input, visual, frames.timestamps, frames.fps,
                                         args["prompt"].as<std::string>());

  FullContextDecoder decoder(backbone);
  decoder.record_hidden_states(args.count("hidden-states") > 0);
  const auto logits = decoder.forward(seq.embeds, seq.positions, seq.deepstack);
  if (args.count("hidden-states"))
    write_npy(args["hidden-states"].as<std::string>(), at::stack(decoder.hidden_states()).to(at::kFloat).contiguous());
  decoder.record_hidden_states(false);
  write_requested_arrays(args, logits, visual, seq);
  const auto ids = decoder.generate(logits, args["generate"].as<int64_t>());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  nlohmann::json out = {{"architecture", backbone.manifest().architecture_name},
                        {"frames", frames.rgb.size(0)},
                        {"visual_tokens", seq.visual_tokens},
                        {"prompt_tokens", seq.embeds.size(0)},
                        {"generated_ids", ids},
                        {"text", backbone.tokenizer().decode(ids)},
                        {"seconds", seconds}};
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace svqa
