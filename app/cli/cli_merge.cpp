// `svqa merge RUN | EXP.yaml`: closes runs answered in stream shards (app/run/shard/shard_merge.h)
// on demand: one run folder, or every run of an experiment's grid (svqa submit's dependent job).

#define CXXOPTS_VECTOR_DELIMITER '\x1f'
#include <cxxopts.hpp>

#include <filesystem>
#include <iostream>

#include "app/cli/cli_commands.h"
#include "core/config/config_loader.h"
#include "core/config/experiment.h"
#include "core/config/grid.h"
#include "engine/registries.h"
#include "app/run/shard/shard_merge.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;

// One run's folder: merged when it holds shards' records; a run answered whole is closed already.
// Returns "" or why it could not be merged.
std::string merge_folder(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir) {
  try {
    if (!recorded_shard_count(dir) && fs::exists(dir + "/scores.json")) {
      std::cout << dir << ": not sharded, closed by its run\n";
      return "";
    }
    merge_run(cfg, registries, dir, std::cout);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

int cmd_merge(int argc, const char* const* argv, const Registries& registries) {
  cxxopts::Options options("svqa merge", "Merge a run's stream shards, score and close it; or every run of a grid.");
  options.add_options()("target", "a run folder, or an experiment YAML (every run of its grid)",
                        cxxopts::value<std::string>())(
      "set", "with EXP.yaml: override one key before expanding (repeatable)", cxxopts::value<std::vector<std::string>>())(
      "out", "with EXP.yaml: results root (default: the experiment's output.dir)", cxxopts::value<std::string>())(
      "h,help", "show this help");
  options.parse_positional({"target"});
  options.positional_help("RUN|EXP.yaml");
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  if (!args.count("target")) throw UsageError("missing the run folder or experiment file");
  if (!args.unmatched().empty()) throw UsageError("unexpected argument '" + args.unmatched()[0] + "'");
  const std::string target = args["target"].as<std::string>();
  std::vector<std::pair<std::string, ExperimentConfig>> folders;  // (dir, its config)
  if (fs::is_directory(target)) {
    const std::string config = target + "/config.yaml";
    if (!fs::exists(config)) throw UsageError(target + ": not a run folder (no config.yaml)");
    folders.emplace_back(target, resolve_experiment(config, {}, registries.sections()));
  } else {
    ConfigNode root = load_config(target);
    if (args.count("set")) apply_overrides(root, args["set"].as<std::vector<std::string>>());
    const auto runs = expand_grid(root, target);
    const auto configs = validate_grid_runs(runs, target, registries.sections());
    const std::string out_root = args.count("out") ? args["out"].as<std::string>() : configs.front().header.output.dir;
    const fs::path grid_dir = fs::path(out_root) / fs::path(target).stem();
    for (size_t i = 0; i < runs.size(); ++i) folders.emplace_back((grid_dir / runs[i].directory()).string(), configs[i]);
  }
  int failed = 0;
  for (const auto& [dir, cfg] : folders)
    if (const std::string why = merge_folder(cfg, registries, dir); !why.empty()) {
      std::cerr << "svqa merge: " << dir << ": " << why << "\n";
      ++failed;
    }
  return failed ? 1 : 0;
}

}  // namespace svqa
