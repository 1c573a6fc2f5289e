// `svqa grid`: expands an experiment's grid and runs its runs (or one shard of them), each in its
// own results directory, resuming whatever a previous run of the same config left. With
// --stream-shards M each run is M tasks (app/run/shard/stream_shard.h), and --shard picks tasks.

#define CXXOPTS_VECTOR_DELIMITER '\x1f'
#include <cxxopts.hpp>

#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_commands.h"
#include "app/cli/run_on_devices.h"
#include "app/cli/run_task.h"
#include "core/io/atomic_file.h"
#include "core/config/config_loader.h"
#include "core/config/experiment.h"
#include "core/config/grid.h"
#include "core/config/path_check.h"
#include "app/run/progress.h"
#include "engine/registries.h"
#include "models/loading/torch_error.h"

namespace svqa {
namespace {

// The grid's runs in its order, for `svqa report` (every shard writes the same list).
void write_grid_listing(const std::string& grid_dir, const std::string& path, const std::vector<GridRun>& runs) {
  nlohmann::json listing = {{"experiment", path}, {"runs", nlohmann::json::array()}};
  for (const auto& run : runs) listing["runs"].push_back(run.name);
  write_file_atomically(grid_dir + "/grid.json", listing.dump(1) + "\n");
}

// One task; a failure (its export missing, its folder held by another svqa, ...) is returned, not thrown.
std::string run_grid_task(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir,
                          const StreamShard& shard, const std::string& command, int& errors) {
  try {
    errors += run_task(cfg, registries, dir, shard, command);
  } catch (const c10::Error& e) {
    return torch_error_line(e);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// A grid's runs mostly vary what happens at question time: unless the file sets memory.cache (a
// folder, or "" for none), they share one under the grid's results, so each stream is encoded once.
// Only the header changes: the runs' configs, and so their folders' names, stay as written. A run
// whose memory snapshots could not replay (its encoder's traits, its codec: validation refuses a cache
// set there) is left out.
void share_memory_cache(std::vector<ExperimentConfig>& configs, const std::string& dir,
                        const RegistrySections& registries) {
  for (auto& cfg : configs) {
    const ConfigNode* memory = cfg.resolved.find("memory");
    if ((!memory || !memory->find("cache")) && memory_snapshots_fit(cfg, registries)) cfg.header.memory.cache = dir;
  }
}

// svqa grid --devices: each child is `svqa grid EXP --stream-shards N --shard i/N` (stream shard i of every run).
int run_grid_on_devices(const cxxopts::ParseResult& args, const std::string& path, const std::vector<ExperimentConfig>& configs) {
  if (args.count("shard") || args.count("list") || args["stream-shards"].as<int64_t>() != 1)
    throw UsageError("--devices gives each device its stream shard of every run: no --shard, --stream-shards or --list with it");
  std::vector<std::string> child = {path};
  if (args.count("out")) child.insert(child.end(), {"--out", args["out"].as<std::string>()});
  if (args.count("set"))
    for (const auto& o : args["set"].as<std::vector<std::string>>()) child.insert(child.end(), {"--set", o});
  return run_on_devices(args["devices"].as<std::string>(), {"grid", child, configs});
}

// A grid's tasks as one shard of them sees them: run k, stream shard k % stream_shards, in `grid_dir`.
struct GridTasks {
  const std::vector<GridRun>& runs;
  int64_t stream_shards;
  StreamShard shard;  // which tasks this process takes
  std::string grid_dir;

  int64_t count() const { return static_cast<int64_t>(runs.size()) * stream_shards; }
  bool mine(int64_t k) const { return shard.takes(static_cast<size_t>(k)); }
  std::string dir(const GridTask& task) const { return grid_dir + "/" + runs[task.run].directory(); }
  std::string part(const GridTask& task) const {
    return stream_shards > 1 ? " (stream shard " + task.shard.name() + ")" : "";
  }
};

// --list: each task's index, * where this shard takes it, its run and directory.
void list_grid_tasks(const GridTasks& tasks) {
  for (int64_t k = 0; k < tasks.count(); ++k) {
    const GridTask task = grid_task(k, tasks.stream_shards);
    std::cout << k << (tasks.mine(k) ? " * " : "   ") << tasks.runs[task.run].name << tasks.part(task) << "  "
              << tasks.dir(task) << "\n";
  }
}

// This shard's tasks one after another; a task that stops is reported and the others still run.
int run_grid_tasks(const GridTasks& tasks, const std::vector<ExperimentConfig>& configs, const Registries& registries,
                   const std::string& path) {
  int errors = 0;
  std::vector<std::string> failed;  // "run name: why", one per task that stopped
  int64_t my_tasks = 0;
  for (int64_t k = 0; k < tasks.count(); ++k) my_tasks += tasks.mine(k);
  Progress progress(my_tasks, 0);
  for (int64_t k = 0; k < tasks.count(); ++k) {
    if (!tasks.mine(k)) continue;
    const GridTask task = grid_task(k, tasks.stream_shards);
    const GridRun& run = tasks.runs[task.run];
    const std::string part = tasks.part(task);
    std::cout << "== run " << task.run + 1 << "/" << tasks.runs.size() << ": " << run.name << part << "\n";
    const std::string why =
        run_grid_task(configs[task.run], registries, tasks.dir(task), task.shard, "svqa grid " + path, errors);
    if (!why.empty()) {
      failed.push_back(run.name + part + ": " + why);
      std::cout << "== run " << task.run + 1 << " failed: " << why << "\n";
    }
    std::cout << "== runs of this " << (tasks.shard.count > 1 ? "shard " : "grid ") << progress.step() << "\n";
  }
  std::cout << "\ngrid " << std::filesystem::path(path).stem().string() << ": " << tasks.runs.size() << " runs under "
            << tasks.grid_dir << (tasks.shard.count > 1 ? " (shard " + tasks.shard.name() + ")" : "")
            << (errors ? "; " + std::to_string(errors) + " questions errored" : "") << "\n";
  if (failed.empty()) return 0;
  std::cerr << "svqa grid: " << failed.size() << " of " << my_tasks
            << " runs failed (rerun the grid to retry them; the others are kept):\n";
  for (const auto& f : failed) std::cerr << "  " << f << "\n";
  return 1;
}

}  // namespace

int cmd_grid(int argc, const char* const* argv, const Registries& registries) {
  cxxopts::Options options("svqa grid", "Run every run of an experiment grid, or one shard of them.");
  options.add_options()("experiment", "experiment YAML with a grid: section", cxxopts::value<std::string>())(
      "set", "override one key before expanding (repeatable)", cxxopts::value<std::vector<std::string>>())(
      "shard", "i/N: run only tasks with index % N == i (a Slurm array task)", cxxopts::value<std::string>())(
      "stream-shards", "M: each run is M tasks, each answering its share of the run's streams (default 1)",
      cxxopts::value<int64_t>()->default_value("1"))(
      "out", "results root (default: the experiment's output.dir)", cxxopts::value<std::string>())(
      "list", "print the tasks and their directories, run nothing")(
      "devices", "LIST: each run's stream shard i on device i, in a child svqa per device, e.g. 0,1 (CUDA) or cpu,cpu",
      cxxopts::value<std::string>())("h,help", "show this help");
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
  const StreamShard shard = args.count("shard") ? shard_option(args["shard"].as<std::string>()) : StreamShard{};
  const int64_t stream_shards = args["stream-shards"].as<int64_t>();
  if (stream_shards < 1 || stream_shards > 10000) throw UsageError("--stream-shards: expected 1 to 10000");

  // Every run is validated before any starts (cross-field rules too): a typo in the last run fails now, not in hours.
  const auto runs = expand_grid(root, path);
  std::vector<ExperimentConfig> configs = validate_grid_runs(runs, path, registries.sections());
  if (!args.count("list"))  // the paths each run names, before any loads (a listing needs none)
    for (const auto& c : configs) require_paths(c, registries.sections());
  const std::string out_root = args.count("out") ? args["out"].as<std::string>() : configs.front().header.output.dir;
  const std::string grid_dir = (std::filesystem::path(out_root) / std::filesystem::path(path).stem()).string();
  if (args.count("devices")) return run_grid_on_devices(args, path, configs);
  const GridTasks tasks{runs, stream_shards, shard, grid_dir};
  if (args.count("list")) {
    list_grid_tasks(tasks);
    return 0;
  }
  write_grid_listing(grid_dir, path, runs);
  share_memory_cache(configs, grid_dir + "/memory_cache", registries.sections());
  return run_grid_tasks(tasks, configs, registries, path);
}

}  // namespace svqa
