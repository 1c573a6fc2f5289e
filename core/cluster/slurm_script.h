#pragma once
// The sbatch scripts of `svqa submit`: an array job of a grid's tasks (runs x stream shards) and the
// job that depends on it (afterany) to merge, score and report. Text only: nothing is run here.

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/slurm_options.h"

namespace svqa {

struct SlurmJob {
  std::string name;               // --job-name
  int64_t array_tasks = 0;        // > 0: an array job 0..array_tasks-1 (with slurm.max_running as %k)
  bool gpus = true;               // ask for slurm.gpus (the merge job does not)
  std::string output;             // --output pattern, e.g. DIR/%A_%a.out
  std::string workdir;            // the job cds there first (relative paths in the experiment resolve as here)
  std::vector<std::string> body;  // shell lines after slurm.setup
};

// `'text'` for a POSIX shell: safe for any byte but NUL.
std::string shell_quote(const std::string& text);

// The script: #SBATCH lines from `options` (partition, gres, cpus, mem, time, requeue, array, then
// options.sbatch as given), `set -euo pipefail`, cd, options.setup, then the body.
std::string sbatch_script(const SlurmOptions& options, const SlurmJob& job);

}  // namespace svqa
