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
  std::string output;             // --output pattern, e.g. DIR/%A_%a.out (DIR through slurm_filename_folder)
  std::string error;              // --error pattern (stderr apart from stdout); empty: into --output
  std::string workdir;            // the job cds there first (relative paths in the experiment resolve as here)
  std::vector<std::string> body;  // shell lines after slurm.setup
};

// `'text'` for a POSIX shell: safe for any byte but NUL.
std::string shell_quote(const std::string& text);

// Characters an #SBATCH value may hold unquoted (sbatch splits its directive lines at blanks and
// reads an unquoted '#' as a comment, quotes and backslashes as a shell would).
inline constexpr const char* kPlainSbatchCharacters =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./%:=,@+-";

// `text` as one #SBATCH value: as is when plain, else in double quotes with '"' and '\' escaped.
// Throws std::invalid_argument for a newline, which no #SBATCH line can hold.
std::string sbatch_value(const std::string& text);

// A folder inside a Slurm --output/--error pattern: '%' doubled (Slurm's literal %). Throws
// std::invalid_argument, naming it, for a backslash (Slurm then expands no pattern at all).
std::string slurm_filename_folder(const std::string& folder);

// The script: #SBATCH lines from `options` (partition, gres, cpus, mem, time, requeue, array, then
// options.sbatch as given), `set -euo pipefail`, cd, options.setup, then the body.
std::string sbatch_script(const SlurmOptions& options, const SlurmJob& job);

}  // namespace svqa
