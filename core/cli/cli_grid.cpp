// `svqa grid`: expands an experiment's grid and runs its runs (or one shard of them), each in its
// own results directory, resuming whatever a previous run of the same config left.

#define CXXOPTS_VECTOR_DELIMITER '\x1f'
#include <cxxopts.hpp>

#include <ATen/core/grad_mode.h>

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/cli/cli_commands.h"
#include "core/io/atomic_file.h"
#include "core/config/config_loader.h"
#include "core/config/experiment.h"
#include "core/config/grid.h"
#include "core/run/progress.h"
#include "core/run/run_folder.h"
#include "core/run/stream_runner.h"
#include "models/loading/torch_error.h"

namespace svqa {
namespace {

// A grid's runs mostly vary what happens at question time: unless the file sets memory.cache (a
// folder, or "" for none), they share one under the grid's results, so each stream is encoded once.
// Only the header changes: the runs' configs, and so their folders' names, stay as written.
void share_memory_cache(std::vector<ExperimentConfig>& configs, const std::string& dir) {
  for (auto& cfg : configs) {
    const ConfigNode* memory = cfg.resolved.find("memory");
    if (!memory || !memory->find("cache")) cfg.header.memory.cache = dir;
  }
}

}  // namespace

int cmd_grid(int argc, const char* const* argv, const Registries& registries) {
  cxxopts::Options options("svqa grid", "Run every run of an experiment grid, or one shard of them.");
  options.add_options()("experiment", "experiment YAML with a grid: section", cxxopts::value<std::string>())(
      "set", "override one key before expanding (repeatable)", cxxopts::value<std::vector<std::string>>())(
      "shard", "i/N: run only runs with index % N == i (a Slurm array task)", cxxopts::value<std::string>())(
      "out", "results root (default: the experiment's output.dir)", cxxopts::value<std::string>())(
      "list", "print the runs and their directories, run nothing")("h,help", "show this help");
  options.parse_positional({"experiment"});
  options.positional_help("EXP.yaml");
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  if (!args.count("experiment")) throw UsageError("missing the experiment file (EXP.yaml)");
  if (!args.unmatched().empty()) throw UsageError("unexpected argument '" + args.unmatched()[0] + "'");
  const std::string path = args["experiment"].as<std::string>();
  ConfigNode root = load_config(path);
  if (args.count("set")) apply_overrides(root, args["set"].as<std::vector<std::string>>());
  std::pair<int64_t, int64_t> shard{0, 1};
  if (args.count("shard")) {
    try {
      shard = parse_shard(args["shard"].as<std::string>());
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }

  // Every run is validated before any starts (cross-field rules too): a typo in the last run fails now, not in hours.
  const auto runs = expand_grid(root, path);
  std::vector<ExperimentConfig> configs = validate_grid_runs(runs, path, registries.sections());
  const std::string out_root = args.count("out") ? args["out"].as<std::string>() : configs.front().header.output.dir;
  const std::string grid_name = std::filesystem::path(path).stem().string();
  share_memory_cache(configs, (std::filesystem::path(out_root) / grid_name / "memory_cache").string());

  // The grid's runs in its order, for `svqa report` (every shard writes the same list).
  if (!args.count("list")) {
    nlohmann::json listing = {{"experiment", path}, {"runs", nlohmann::json::array()}};
    for (const auto& run : runs) listing["runs"].push_back(run.name);
    write_file_atomically((std::filesystem::path(out_root) / grid_name / "grid.json").string(), listing.dump(1) + "\n");
  }

  int errors = 0;
  std::vector<std::string> failed;  // "run name: why", one per run that stopped
  at::InferenceMode inference;
  int64_t my_runs = 0;
  for (size_t i = 0; i < runs.size(); ++i) my_runs += static_cast<int64_t>(i) % shard.second == shard.first;
  Progress progress(my_runs, 0);
  for (size_t i = 0; i < runs.size(); ++i) {
    const bool mine = static_cast<int64_t>(i) % shard.second == shard.first;
    const std::string dir = (std::filesystem::path(out_root) / grid_name / runs[i].directory()).string();
    if (args.count("list")) {
      std::cout << i << (mine ? " * " : "   ") << runs[i].name << "  " << dir << "\n";
      continue;
    }
    if (!mine) continue;
    std::cout << "== run " << i + 1 << "/" << runs.size() << ": " << runs[i].name << "\n";
    // A run that fails (its export missing, its folder held by another svqa, ...) does not stop the others.
    std::string why;
    try {
      const RunFolder folder(dir, runs[i].config, "svqa grid " + path);
      apply_runtime(configs[i].header.runtime);
      errors += run_streams(configs[i], registries, dir, std::cout, isatty(STDOUT_FILENO));
    } catch (const c10::Error& e) {
      why = torch_error_line(e);
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (!why.empty()) {
      failed.push_back(runs[i].name + ": " + why);
      std::cout << "== run " << i + 1 << " failed: " << why << "\n";
    }
    std::cout << "== runs of this " << (shard.second > 1 ? "shard " : "grid ") << progress.step() << "\n";
  }
  if (!args.count("list"))
    std::cout << "\ngrid " << grid_name << ": " << runs.size() << " runs under " << out_root << "/" << grid_name
              << (shard.second > 1 ? " (shard " + std::to_string(shard.first) + "/" + std::to_string(shard.second) + ")" : "")
              << (errors ? "; " + std::to_string(errors) + " questions errored" : "") << "\n";
  if (failed.empty()) return 0;
  std::cerr << "svqa grid: " << failed.size() << " of " << my_runs
            << " runs failed (rerun the grid to retry them; the others are kept):\n";
  for (const auto& f : failed) std::cerr << "  " << f << "\n";
  return 1;
}

}  // namespace svqa
