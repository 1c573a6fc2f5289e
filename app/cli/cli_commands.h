#pragma once
// The `svqa` subcommands that live outside cli.cpp, one file each, and the error they share.

#include <stdexcept>
#include <string>

#include "models/video/frame_sampling.h"

namespace svqa {

struct Registries;

// Bad command line: reported with the command's name, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// --frame-times and --frame-step as the video sampling they name; a UsageError naming the option
// otherwise (cli_frames.cpp; `svqa frames` and `svqa benchmark check` take both).
VideoSampling video_sampling_options(const std::string& frame_times, const std::string& frame_step);

// Each takes argv[1..] (argv[0] is the command name) and returns the exit code.
int cmd_probe(int argc, const char* const* argv);
int cmd_frames(int argc, const char* const* argv);
int cmd_make_video(int argc, const char* const* argv);
int cmd_embed(int argc, const char* const* argv);
int cmd_cache(int argc, const char* const* argv);  // cli_cache.cpp
int cmd_list(int argc, const char* const* argv, const Registries& registries);  // cli_list.cpp
int cmd_benchmark(int argc, const char* const* argv, const Registries& registries);  // cli_benchmark.cpp
int cmd_score(int argc, const char* const* argv, const Registries& registries);      // cli_benchmark.cpp
int cmd_grid(int argc, const char* const* argv, const Registries& registries);       // cli_grid.cpp
int cmd_report(int argc, const char* const* argv, const Registries& registries);     // cli_report.cpp
int cmd_merge(int argc, const char* const* argv, const Registries& registries);   // cli_merge.cpp
int cmd_submit(int argc, const char* const* argv, const Registries& registries);  // cli_submit.cpp
int cmd_export_results(int argc, const char* const* argv, const Registries& registries);  // cli_export.cpp

}  // namespace svqa
