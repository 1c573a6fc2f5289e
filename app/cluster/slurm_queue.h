#pragma once
// Talking to Slurm through its commands: sbatch to submit, squeue (and sacct where the cluster
// keeps accounting) to ask what became of a job's tasks.

#include <map>
#include <string>
#include <vector>

namespace svqa {

// Runs `argv` (each argument quoted for the shell), returns what it printed (stdout and stderr);
// throws std::runtime_error with the command and the last line it printed when it cannot run or
// exits non-zero.
std::string run_command(const std::vector<std::string>& argv);

// sbatch --parsable [--dependency=afterany:JOB] SCRIPT → the job id.
std::string submit_script(const std::string& script, const std::string& after_any = "");

// The state of each task of the given jobs that Slurm still knows ("123_4" → "RUNNING", "123" →
// "PENDING"): squeue's (ended jobs too, for the cluster's MinJobAge), then sacct's for tasks squeue
// no longer lists (none where accounting is off). Tasks of a pending array show one by one.
std::map<std::string, std::string> job_states(const std::vector<std::string>& jobs);

}  // namespace svqa
