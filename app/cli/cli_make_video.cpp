// `svqa make-video`: writes the synthetic stream the demo runs on (benchmarks/datasets/synthetic_video.h).

#define CXXOPTS_VECTOR_DELIMITER '\x1f'
#include <cxxopts.hpp>

#include <iostream>

#include "benchmarks/datasets/synthetic_video.h"
#include "app/cli/cli_commands.h"

namespace svqa {

int cmd_make_video(int argc, const char* const* argv) {
  cxxopts::Options options("svqa make-video", "Write a synthetic video whose content at every second is known.");
  SyntheticVideoOptions o;
  options.add_options()("out", "output .avi", cxxopts::value<std::string>())(
      "seconds", "length", cxxopts::value<double>()->default_value("130"))(
      "fps", "frames per second", cxxopts::value<double>()->default_value("2"))(
      "phase", "seconds per background colour", cxxopts::value<double>()->default_value("20"))("h,help", "show this help");
  options.parse_positional({"out"});
  options.positional_help("OUT.avi");
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  if (!args.count("out")) throw UsageError("missing the output file (OUT.avi)");
  o.seconds = args["seconds"].as<double>();
  o.fps = args["fps"].as<double>();
  o.phase_seconds = args["phase"].as<double>();
  if (o.seconds <= 0 || o.fps <= 0 || o.phase_seconds <= 0) throw UsageError("--seconds, --fps and --phase must be > 0");
  write_synthetic_video(args["out"].as<std::string>(), o);
  std::cout << args["out"].as<std::string>() << ": " << o.seconds << " s at " << o.fps << " fps; background colours";
  for (double t = 0; t < o.seconds; t += o.phase_seconds) std::cout << " " << t << "s=" << synthetic_color_at(t, o);
  std::cout << "\n";
  return 0;
}

}  // namespace svqa
