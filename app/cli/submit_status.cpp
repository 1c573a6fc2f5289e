#include "app/cli/submit_status.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "app/cluster/slurm_queue.h"
#include "app/run/shard/shard_merge.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;

const std::set<std::string> kLive = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "REQUEUE_HOLD",
                                     "REQUEUE_FED", "RESIZING", "SUSPENDED", "STAGE_OUT", "SIGNALING"};

nlohmann::json read_submission(const std::string& grid_dir) {
  const std::string file = slurm_folder(grid_dir) + "/submitted.json";
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file + ": not found: nothing was submitted for this experiment (and --out)");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(file + ": not valid JSON (" + std::string(e.what()) + ")");
  }
}

// The last non-empty line of a file ("" when it has none or cannot be read).
std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

// Why a job failed, from its logs (LOG.out, LOG.err): the last line of its stderr, where svqa and
// Slurm write what went wrong (stdout's last line may be another run's success, written after it);
// else stdout's last line; else why there is none.
std::string failure_line(const std::string& log) {
  if (std::string why = last_line(log + ".err"); !why.empty()) return why;
  if (std::string last = last_line(log + ".out"); !last.empty()) return last;
  return fs::exists(log + ".out") ? "its log " + log + ".out is empty" : "no log at " + log + ".out";
}

// Whether a task's share of its run is recorded: a whole run closed, or a stream shard complete.
bool task_done(const ExperimentConfig& cfg, const Registries& registries, const std::string& dir, const StreamShard& shard) {
  if (shard.count == 1) return fs::exists(dir + "/scores.json");
  const ComponentChoice& choice = *cfg.component("benchmark");
  return shard_progress(registries.benchmark.create(choice.type, choice.options)->streams(), dir, shard).complete();
}

struct Tally {
  std::map<std::string, int> counts;  // done, running, pending, failed
  void add(const std::string& what) { counts[what] += 1; }
};

std::string category(const std::string& state) {
  if (state == "PENDING" || state == "REQUEUED" || state == "REQUEUE_HOLD") return "pending";
  return "running";
}

}  // namespace

int print_submit_status(const std::string& grid_dir, const std::vector<GridRun>& runs,
                        const std::vector<ExperimentConfig>& configs, const Registries& registries) {
  const nlohmann::json submitted = read_submission(grid_dir);
  const std::string array = submitted.at("array_job"), merge = submitted.at("merge_job");
  const int64_t stream_shards = submitted.at("stream_shards"), tasks = submitted.at("tasks");
  if (tasks != static_cast<int64_t>(runs.size()) * stream_shards)
    throw std::runtime_error(slurm_folder(grid_dir) + "/submitted.json: " + std::to_string(tasks) +
                             " tasks, but the experiment now has " + std::to_string(runs.size() * stream_shards) +
                             ": it changed since it was submitted");
  const auto states = job_states({array, merge});
  const std::string logs = slurm_folder(grid_dir) + "/logs/";
  Tally tally;
  std::string failures;
  for (int64_t k = 0; k < tasks; ++k) {
    const GridTask task = grid_task(k, stream_shards);
    const auto state = states.find(array + "_" + std::to_string(k));
    const std::string slurm_state = state == states.end() ? "" : state->second;
    if (kLive.count(slurm_state)) {
      tally.add(category(slurm_state));
      continue;
    }
    const std::string dir = grid_dir + "/" + runs[task.run].directory();
    if (task_done(configs[task.run], registries, dir, task.shard)) {
      tally.add("done");
      continue;
    }
    tally.add("failed");
    failures += "  task " + std::to_string(k) + " " + runs[task.run].name +
                (stream_shards > 1 ? " (stream shard " + task.shard.name() + ")" : "") + ": " +
                (slurm_state.empty() ? "ended" : slurm_state) + ": " +
                failure_line(logs + array + "_" + std::to_string(k)) + "\n";
  }
  std::cout << "array job " << array << ": " << tasks << " tasks (" << runs.size() << " runs x " << stream_shards
            << " stream shards): " << tally.counts["done"] << " done, " << tally.counts["running"] << " running, "
            << tally.counts["pending"] << " pending, " << tally.counts["failed"] << " failed\n"
            << failures;
  const auto merge_state = states.find(merge);
  std::string merge_line;
  if (merge_state != states.end() && kLive.count(merge_state->second)) {
    merge_line = merge_state->second;
    tally.add(category(merge_state->second));
  } else if (merge_state != states.end() ? merge_state->second == "COMPLETED"
                                          : fs::exists(grid_dir + "/report/report.md")) {
    merge_line = "done: " + grid_dir + "/report/report.md";
    tally.add("done");
  } else {
    merge_line = (merge_state != states.end() ? merge_state->second : std::string("failed")) + ": " + failure_line(logs + "merge_" + merge);
    tally.add("failed");
  }
  std::cout << "merge job " << merge << " (afterany:" << array << "): " << merge_line << "\n";
  if (tally.counts["running"] || tally.counts["pending"]) return 3;
  return tally.counts["failed"] ? 1 : 0;
}

}  // namespace svqa
