// `svqa submit EXP.yaml`: an experiment's grid as one Slurm array job, one task per run x stream
// shard (each `svqa grid --shard k/T --stream-shards M`), and a job that depends on it
// (afterany) to merge the runs, score them and write the report. --dry-run prints the array's
// script; --status says what became of the last submission (app/cli/submit_status.h).

#define CXXOPTS_VECTOR_DELIMITER '\x1f'
#include <cxxopts.hpp>

#include <filesystem>
#include <iostream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "app/cli/cli_commands.h"
#include "app/cli/submit_status.h"
#include "app/cluster/slurm_queue.h"
#include "app/cluster/slurm_script.h"
#include "core/config/config_loader.h"
#include "core/config/experiment.h"
#include "core/config/grid.h"
#include "core/config/slurm_options.h"
#include "core/io/atomic_file.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;

struct Submission {
  std::string experiment;              // absolute
  std::vector<std::string> overrides;  // --set, passed on to every job
  std::string out_root;                // absolute
  std::string grid_dir;
  SlurmOptions slurm;
  int64_t runs = 0;
  int64_t tasks() const { return runs * slurm.stream_shards; }
};

// "svqa COMMAND EXP --out OUT --set ..." quoted for the scripts, svqa by its absolute path.
std::string svqa_line(const Submission& s, const std::string& command) {
  std::string line = shell_quote(fs::read_symlink("/proc/self/exe").string()) + " " + command + " " +
                     shell_quote(s.experiment) + " --out " + shell_quote(s.out_root);
  for (const auto& o : s.overrides) line += " --set " + shell_quote(o);
  return line;
}

// Each job's stdout in NAME.out and its stderr (svqa's error lines, Slurm's own) apart in NAME.err,
// so --status can quote a failure even after lines that other runs' successes wrote later.
std::string logs_folder(const Submission& s) { return slurm_filename_folder(slurm_folder(s.grid_dir) + "/logs"); }

SlurmJob array_job(const Submission& s) {
  const std::string name = fs::path(s.grid_dir).filename().string();
  return {"svqa-" + name, s.tasks(), true, logs_folder(s) + "/%A_%a.out", logs_folder(s) + "/%A_%a.err",
          fs::current_path().string(),
          {"# task k: run k / " + std::to_string(s.slurm.stream_shards) + ", stream shard k % " +
               std::to_string(s.slurm.stream_shards) + " (a requeued task resumes from its records)",
           "exec " + svqa_line(s, "grid") + " --stream-shards " + std::to_string(s.slurm.stream_shards) +
               " --shard \"${SLURM_ARRAY_TASK_ID}/" + std::to_string(s.tasks()) + "\""}};
}

SlurmJob merge_job(const Submission& s) {
  const std::string name = fs::path(s.grid_dir).filename().string();
  return {"svqa-" + name + "-merge", 0, false, logs_folder(s) + "/merge_%j.out", logs_folder(s) + "/merge_%j.err",
          fs::current_path().string(),
          {svqa_line(s, "merge"), shell_quote(fs::read_symlink("/proc/self/exe").string()) + " report " +
                                      shell_quote(s.grid_dir) + " --out " + shell_quote(s.grid_dir + "/report")}};
}

// Writes both scripts, submits the array and the merge after it, records the ids for --status.
void submit(const Submission& s) {
  const std::string folder = slurm_folder(s.grid_dir);
  fs::create_directories(folder + "/logs");
  write_file_atomically(folder + "/array.sbatch", sbatch_script(s.slurm, array_job(s)));
  write_file_atomically(folder + "/merge.sbatch", sbatch_script(s.slurm, merge_job(s)));
  const std::string array = submit_script(folder + "/array.sbatch");
  const std::string merge = submit_script(folder + "/merge.sbatch", array);
  const nlohmann::json submitted = {{"experiment", s.experiment},  {"array_job", array},
                                    {"merge_job", merge},          {"tasks", s.tasks()},
                                    {"runs", s.runs},              {"stream_shards", s.slurm.stream_shards}};
  write_file_atomically(folder + "/submitted.json", submitted.dump(1) + "\n");
  std::cout << "submitted array job " << array << " (" << s.tasks() << " tasks: " << s.runs << " runs x "
            << s.slurm.stream_shards << " stream shards) and merge job " << merge << " (afterany:" << array
            << ")\nlogs: " << folder << "/logs/\nstatus: svqa submit " << s.experiment << " --status\n";
}

}  // namespace

int cmd_submit(int argc, const char* const* argv, const Registries& registries) {
  cxxopts::Options options("svqa submit", "Run an experiment's grid on Slurm: an array job and a dependent merge job.");
  options.add_options()("experiment", "experiment YAML (its slurm: section)", cxxopts::value<std::string>())(
      "set", "override one key before expanding (repeatable; passed on to every job)",
      cxxopts::value<std::vector<std::string>>())(
      "out", "results root (default: the experiment's output.dir)", cxxopts::value<std::string>())(
      "dry-run", "print the array job's script, submit nothing")(
      "status", "what became of the last submission: each task done, running, pending or failed")("h,help",
                                                                                                  "show this help");
  options.parse_positional({"experiment"});
  options.positional_help("EXP.yaml");
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help();
    return 0;
  }
  if (!args.count("experiment")) throw UsageError("missing the experiment file (EXP.yaml)");
  if (!args.unmatched().empty()) throw UsageError("unexpected argument '" + args.unmatched()[0] + "'");
  Submission s;
  const std::string path = args["experiment"].as<std::string>();
  s.experiment = fs::absolute(path).lexically_normal().string();
  if (args.count("set")) s.overrides = args["set"].as<std::vector<std::string>>();
  ConfigNode root = load_config(path);
  apply_overrides(root, s.overrides);
  s.slurm = slurm_options(root);
  const auto runs = expand_grid(root, path);
  const auto configs = validate_grid_runs(runs, path, registries.sections());  // every run checked before submitting
  s.runs = static_cast<int64_t>(runs.size());
  s.out_root = fs::absolute(args.count("out") ? args["out"].as<std::string>() : configs.front().header.output.dir)
                   .lexically_normal()
                   .string();
  s.grid_dir = (fs::path(s.out_root) / fs::path(path).stem()).string();
  if (args.count("status")) return print_submit_status(s.grid_dir, runs, configs, registries);
  try {  // a path no #SBATCH line can hold: refused before anything is written
    sbatch_script(s.slurm, array_job(s));
    sbatch_script(s.slurm, merge_job(s));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (args.count("dry-run")) {
    std::cout << sbatch_script(s.slurm, array_job(s));
    std::cerr << "svqa submit: dry run: " << s.tasks() << " array tasks, then a merge job (afterany) running:\n  "
              << merge_job(s).body.front() << "\n";
    return 0;
  }
  submit(s);
  return 0;
}

}  // namespace svqa
